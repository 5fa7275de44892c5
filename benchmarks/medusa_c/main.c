/****************************************************************************/
/*                                  main.c                                  */
/* created by Peter Varadi, last modified June 30, 1999, 257 lines          */
/* MEDUSA final: integrator and output functions                            */
/****************************************************************************/
/* Global variables:          line 34                                       */
/* Functions:                                                               */
/* - main()                   line 40                                       */
/* - integrate()              line 108                                      */
/* - save_data_point()        line 182                                      */
/* - write_to_file()          line 207                                      */
/****************************************************************************/
/* Transcribed from the MEDUSA report (UCB-ITS-PRR-99-32), Appendix F, for   */
/* benchmarking only; see README.md for what was repaired. The blocks under */
/* #ifdef MEDUSA_TRACE are not MEDUSA's: they count and print the attempted */
/* steps for the verification build (medusa_trace), and are compiled out of */
/* the timed program.                                                       */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>
#include "common.h"

/* The state vector of a vehicle has 24 states for the Cosserat point and 4
states for the tires: */
#define STATES 28
/* The output is buffered KMAX times before it is written to the output file: */
#define KMAX 100

/****************************************************************************/
/* Global Variables: */
/****************************************************************************/
extern simu_struct simulation;
static FILE *smart_path_file, *director_file, *energy_file, *velocity_file;
static Matrix data;                 /* output data is stored in a Matrix */
static vehicle_struct *vehicle;     /* array of vehicle models */
static int nv;                      /* number of vehicles in the platoon */

#ifdef MEDUSA_TRACE
FILE *medusa_trace_file;            /* STEP and PAIR lines, see README.md */
static FILE *medusa_state_file;     /* full-precision states at the save points */
static long n_accepted=0, n_rejected=0, n_accepted_contact=0, n_episodes=0;
#endif

int main(int argc, char *argv[])
/* The main function calls the initialization function init(), initializes the
global variables and calls the integrator. The arguments argc and argv are
passed to init(). */
{
 time_t time1, time2;
 void init(int argc, char *argv[]);
 void integrate(void);

 /****************************************/
 /* Initialize simulation run: */
 /****************************************/
 init(argc,argv);
 vehicle=simulation.vehicle;        /* substitution */
 nv=simulation.NofV;
 data=matrix(1+25*nv,KMAX);
 smart_path_file=fopen("path.asc","w");
 setvbuf(smart_path_file,NULL,_IOFBF,BUFSIZ);
 director_file=fopen("director.asc","w");
 setvbuf(director_file,NULL,_IOFBF,BUFSIZ);
 energy_file=fopen("energy.asc","w");
 setvbuf(energy_file,NULL,_IOFBF,BUFSIZ);
 velocity_file=fopen("velocity.asc","w");
 setvbuf(velocity_file,NULL,_IOFBF,BUFSIZ);
#ifdef MEDUSA_TRACE
 medusa_trace_file=fopen("medusa_trace.txt","w");
 medusa_state_file=fopen("medusa_states.txt","w");
#endif

 /****************************************/
 /* Print some information to the screen: */
 /****************************************/
 printf("\n\n\n The simulation for %d vehicles will stop after %g [s]\n", nv,
          simulation.integrate.end_time);
 printf("\n\t- stepsize: %g [s]\n", simulation.integrate.delta_t);
 printf("\t- save data point every %g [s]\n\n",
      simulation.integrate.save_delta_t);

 /****************************************/
 /* run simulation: */
 /****************************************/
 time1=time(NULL);                  /* record when simulation started */
 integrate();
 time2=time(NULL);                  /* record when simulation ended */

 /****************************************/
 /* postprocessing: */
 /****************************************/
 printf("\n start time=%s",asctime(localtime(&time1)));
 printf("\n end time=%s",asctime(localtime(&time2)));
 printf("\n The simulation took %e seconds\n",difftime(time2,time1));
#ifdef MEDUSA_TRACE
 fprintf(medusa_trace_file,"COUNTS accepted=%ld rejected=%ld accepted_in_contact=%ld"
         " episodes=%ld\n",n_accepted,n_rejected,n_accepted_contact,n_episodes);
 fclose(medusa_trace_file);
 fclose(medusa_state_file);
#endif
 fclose(energy_file);
 fclose(velocity_file);
 fclose(director_file);
 fclose(smart_path_file);
 free_matrix(data);
 fclose(simulation.ofp);
 return(EXIT_SUCCESS);
}

/****************************************************************************/
/*                               Integration                                */
/****************************************************************************/
#define DT_MIN 5.e-6

void integrate(void)
/* This function integrates the equations of motion of the vehicles from t1=0 to
     t2 with a fixed step-size. The step-size is reduced if any two vehicles are
     in contact. */
{
      double t=0.0, t2;                 /* start and end times */
      double dt,dt_max;                 /* step sizes */
      Matrix dz, h;                     /* intermediate storage */
      int i, cv, contact, just_reduced=-1;
      int set_constraint_forces(void);
      void equations_of_motion(Vector, vehicle_struct *);
      void save_data_point(double t);
      void write_to_file(void);
#ifdef MEDUSA_TRACE
      int last_accepted_contact=FALSE;
#endif

      /* Initialize: */
      t2=simulation.integrate.end_time;
      dt_max=dt=simulation.integrate.delta_t;
      dz=matrix(nv,STATES);
      h=matrix(nv,STATES);
      for (cv=1;cv<=nv;cv++) for (i=1;i<=STATES;i++) h[cv][i]=vehicle[cv].z[i];
      /* The matrix h contains now a copy of all state vectors. h is used to trace
            the simulation back by one step if the step size needs to be reduced. */

      while (t <= t2) {
            simulation.integrate.time=t;
            save_data_point(t);     /* Make sure that initial conditions are stored. */
            /* calculate prediction of next integration step: */
            for (cv=1;cv<=nv;cv++) {
              for (i=1;i<=12;i++) vehicle[cv].z[i]=h[cv][i]+dt*h[cv][i+12];
              for (i=13;i<=STATES;i++) vehicle[cv].z[i]=h[cv][i];
            }
            /* Calculate constraint forces based on this prediction: */
            contact=set_constraint_forces();
#ifdef MEDUSA_TRACE
            if (contact || just_reduced>=0)
                  fprintf(medusa_trace_file,"STEP t=%.9f dt=%.9e contact=%d %s\n",t,dt,
                          contact,(!contact || dt<DT_MIN) ? "accept" : "reject");
            if (!contact || dt<DT_MIN) {
                  n_accepted++;
                  if (contact) {
                        n_accepted_contact++;
                        if (!last_accepted_contact) n_episodes++;
                  }
                  last_accepted_contact=contact;
            } else n_rejected++;
#endif
            /* If no contact has occured or if integrator runs already on the smallest
                  step size, proceed with integration. Else reduce the step size and
                  start current integration step all over again: */
            if (!contact || dt<DT_MIN) {
                   /* Calculate equations of motion and new state vectors: */
                   for (cv=1;cv<=nv;cv++) {
                         equations_of_motion(dz[cv], vehicle+cv);
                         for (i=1;i<=STATES;i++) vehicle[cv].z[i]=(h[cv][i] += dt*dz[cv][i]);
                   }
                  t+=dt;
                  /* If there was no contact for a while and the step size is small, it
                         is increased again: */
                  if (!contact && just_reduced<0 && dt<dt_max) {
                         dt*=1.1;
                         printf("t=%f\t delta t=%f\n",t,dt);
                  }
                  just_reduced--;
            } else {
                  dt/=1.4641;                       /* decrease step size */
                  just_reduced=100;  /* keep current step size for at least 80 steps */
                  printf("t=%f\t delta_t=%f\n",t,dt); /* print current step size */
            }
      }
#ifdef MEDUSA_TRACE
      for (cv=1;cv<=nv;cv++) {
           fprintf(medusa_state_file,"FINAL t=%.17g vehicle=%d z=",t,cv);
           for (i=1;i<=28;i++) fprintf(medusa_state_file,"%.17g%s",vehicle[cv].z[i],
                                       i<28 ? "," : "\n");
      }
#endif
      write_to_file();
      free_matrix(h);
      free_matrix(dz);
}

/****************************************************************************/
/*                                  Output                                  */
/****************************************************************************/
/* When this counter reaches KMAX, then the output buffer output_data[] is full
     and needs to be written to the disk: */
static int count=0;

void save_data_point(double t)
/* This function saves a datapoint to the output data buffer whenever enough
     time has passed since the last time a data point was saved. The input t is
     the current time. */
{
     int cv, i;
     static double t_old= -100; /* Last saved timestep. This initialization makes
                                   the function save the initial conditions to the file. */
     void write_to_file(void);
     double energy(vehicle_struct *);

     /* Has enough time passed?: */
     if ((t-t_old)>=0.999999*simulation.integrate.save_delta_t) {
           t_old=t;
           count++;
           data[1][count]=t;                        /* saves current time */
           for (cv=1;cv<=nv;cv++) {                 /* saves data of every vehicle */
                for (i=1;i<24;i++) data[25*cv-24+i][count]=vehicle[cv].z[i]; /* state */
                data[cv*25+1][count]=energy(vehicle+cv);                      /* energy */
           }
#ifdef MEDUSA_TRACE
           for (cv=1;cv<=nv;cv++) {
                fprintf(medusa_state_file,"SAVE t=%.17g vehicle=%d z=",t,cv);
                for (i=1;i<=28;i++) fprintf(medusa_state_file,"%.17g%s",vehicle[cv].z[i],
                                            i<28 ? "," : "\n");
           }
#endif
           printf("t=%.4f\n",t);                    /* write current time to screen */
           if (count==KMAX) write_to_file();        /* write to file if buffer is full */
     }
}

void write_to_file(void)
/* This function writes the output files using fprintf() commands. The global
     counter variable count is reset. */
{
     int i, cnt, cv;

     /* Write directors, velocities and energies to individual files: */
      for (cnt=1;cnt<=count;cnt++) {
            /* time is first on every line: */
            fprintf(director_file, "%e\t", data[1][cnt]);
            fprintf(energy_file, "%e\t", data[1][cnt]);
            fprintf(velocity_file, "%e\t", data[1][cnt]);
            /* now for every car: */
            for (cv=1;cv<=nv;cv++) {
                  for (i=1;i<=12;i++) {
                         fprintf(director_file,"%e\t",data[25*cv-24+i][cnt]); /* directors */
                         fprintf(velocity_file,"%e\t",data[25*cv-12+i][cnt]); /* velocities */
                  }
                  fprintf(energy_file,"%e\t",data[1+cv*25][cnt]);             /* energy */
                  /* SmartPATH data: */
                  fprintf(smart_path_file,"%e\t",data[1][cnt]);               /* time */
                  fprintf(smart_path_file,"%d\t0\t0\t",cv);            /* vehicle number */
                  for (i=1;i<=3;i++)
                         fprintf(smart_path_file,"%e\t",data[25*cv-24+i][cnt]); /* x y z */
                  fprintf(smart_path_file,"%e\t%e\t%e\t",
                         atan2(data[25*cv-19][count],data[25*cv-20][count]),  /* heading */
                         atan2((data[25*cv-14][count]*data[25*cv-20][count]+  /* pitch */
                         data[25*cv-19][count]*data[25*cv-13][count])/
                         sqrt(data[25*cv-20][count]*data[25*cv-20][count]+
                         data[25*cv-19][count]*data[25*cv-19][count]),
                         data[25*cv-12][count]),
                         atan2((data[25*cv-19][count]*data[25*cv-14][count]-  /* roll */
                         data[25*cv-20][count]*data[25*cv-13][count])/
                         sqrt(data[25*cv-20][count]*data[25*cv-20][count]+
                         data[25*cv-19][count]*data[25*cv-19][count]),
                         data[25*cv-12][count]));
                  fprintf(smart_path_file,"0\t");                      /* segment ID */
                  fprintf(smart_path_file,"%e\t",                      /* speed */
                         sqrt(data[25*cv-11][count]*data[25*cv-11][count]+
                         data[25*cv-10][count]*data[25*cv-10][count]));
                  fprintf(smart_path_file, "0 0 0 0 0 0 0 \n");       /* stuff */
            }
            /* terminate lines: */
            fprintf(director_file,"\n");
            fprintf(velocity_file,"\n");
            fprintf(energy_file,"\n");
      }
      count=0;
}
