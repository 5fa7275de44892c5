/****************************************************************************/
/*                                  init.c                                  */
/* created by Peter Varadi and Gwo_jeng Lo, modified June 30, 1999, 615 lines */
/* The code in this file reads the road data, the data for the vehicle models */
/* and the data for the platoon from separate files. The command line options */
/* are evaluated and the simulation is initialized.                         */
/****************************************************************************/
/* Functions:                                                               */
/* - init()                 line 51                                         */
/* - evaluate_cmd_line()    line 80                                         */
/* - print_options()        line 123                                        */
/* - cmderror()             line 135                                        */
/* - read_models()          line 148                                        */
/* - read_vehicles()        line 262                                        */
/* - read_file()            line 354                                        */
/* - find_token()           line 411                                        */
/* - read_expr()            line 433                                        */
/* - road_init()            line 458                                        */
/* - seg_init()             line 580                                        */
/****************************************************************************/
/* Transcribed from the MEDUSA report (UCB-ITS-PRR-99-32), Appendix F, for   */
/* benchmarking only; see README.md for what was repaired.                  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <math.h>
#include "common.h"

/* The position vector and the 3 directors of a Cosserat point have 12 vector
components. The state vector of a vehicle has 24+4 states (Cosserat point plus
tire model) : */
#define N 12
#define STATES 28

#define DEFAULT_INPUT_FILE "platoon.dat"
#define MODEL_FILE "model.dat"
#define DELTA_T 0.00005    /* default stepsize of the integrator */
#define SAVE_DELTA_T 0.01  /* default time intervals for saving a data point */
#define TOKEN_LENGTH 20    /* maximal lenght of a keyword in the input files */

simu_struct simulation={DEFAULT_INPUT_FILE};

/****************************************************************************/
/*                           Main Initialization                            */
/****************************************************************************/
void init(int argc, char *argv[])
/* Main initialization function. argc and argv are the command line options that
    are passed down directly from main(). init() initializes the simulation
    structure, evaluates the command line options, sets up the road and the
    platoon. */
{
     void evaluate_cmd_line(int argc, char *argv[]);
     void read_models(void);
     void read_vehicles(void);
     void road_init(void);

     /* Initialize the global simulation structure: */
     simulation.integrate.end_time=0.0;
     simulation.integrate.delta_t=DELTA_T;
     simulation.integrate.save_delta_t=SAVE_DELTA_T;
     simulation.ofp=fopen("oop.asc","w");
     setvbuf(simulation.ofp,NULL,_IOFBF,BUFSIZ);
     evaluate_cmd_line(argc,argv);
     read_models();
     read_vehicles();
     road_init();
}

/****************************************************************************/
/*                        read command line options                         */
/****************************************************************************/
void evaluate_cmd_line(int argc, char *argv[])
/* Command line options are passed down from main() in argc and argv. The
     options are evaluated using a switch statement. Error messages are generated
     for missing or unknown options. Refer to a C manual for reference on the argv
     and argc variables. */
{
     int i;
     void print_options(void);
     void cmderror(char text[]);

     /* Refer to print_options() below for an explanation of these options: */
     for (i=1;i<argc;i++) {
           if (argv[i][0]=='-')
                switch (argv[i][1]) {
                case 'd' : if (!sscanf(argv[i]+2,"%lf",&simulation.integrate.delta_t))
                                   cmderror(argv[i]);
                           break;
                case 'f' : simulation.in_file=argv[i]+2;
                           break;
                case 'h' : print_options();
                           break;
                case 's' : if (!sscanf(argv[i]+2,"%lf",
                                   &simulation.integrate.save_delta_t))
                                   cmderror(argv[i]);
                           break;
                case 't' : if (!sscanf(argv[i]+2,"%lf",&simulation.integrate.end_time))
                                   cmderror(argv[i]);
                           break;                             /* restored */
                default  : cmderror(argv[i]);
           } else {
               printf("\n\n unknown command line option %s .",argv[i]);
               printf(" Type %s -h for help\n\n",argv[0]);
               exit(EXIT_FAILURE);
           }
     }
     /* An error message is generated if the simulation ending time (option -t)
     was not specified: */
     if (simulation.integrate.end_time==0.0) {
          printf("\n\nNo endtime specified. Type %s -h for help\n\n",argv[0]);
          exit(EXIT_FAILURE);
     }
}

void print_options(void)
/* Prints command line otions and exits program. */
{
     printf("\n\n The command line options are:\n\n");
     printf(" -h        prints this list\n");
     printf(" -dx.xxx   set fixed stepsize to x.xxx [s] (default: %g)\n",DELTA_T);
     printf(" -ffile    parameter file (default: %s)\n",DEFAULT_INPUT_FILE);
     printf(" -tx.xx    simulation ends at x.xx [s] (mandatory)\n");
     printf(" -sx.xx    save data point every x.xx [s] (default: %g)\n",SAVE_DELTA_T);
     exit(EXIT_FAILURE);
}

void cmderror(char text[])
/* Generic error handler for evaluate_cmd_line(). */
{
     printf("\n\n error in command line option %s .",text);
     printf(" Use option -h for help\n\n");
     exit(EXIT_FAILURE);
}

/****************************************************************************/
/*                     Read vehicle models from file                        */
/****************************************************************************/
void read_models(void)
/* Reads the number of models and the individual models from the file
     model.dat */
{
     int i,j,k,m;
     char *buffer, *ptr;       /* ptr points to character inside buffer[] */
     char str[]="D11";
     vehicle_struct *v;        /* restored: short for simulation.model */
     /* variables for intermediate results: */
     double Ix, Iy, Iz, E, nu, vol, I[4][4];
     Matrix M;
     char *read_file(char *filename);
     double read_expr(char token[], char **ptr);
     void find_token(char token[], char **ptr);

     /* Read the reduced file contents into the buffer array: */
     ptr=buffer=read_file(MODEL_FILE);
     /* ptr points to start of buffer array */
     simulation.NofM=(int) read_expr("NUMBER_OF_MODELS",&ptr);
     /* Allocate memory for the models (v[0] is void): */
     v=simulation.model=(vehicle_struct *)
                 malloc((size_t) ((simulation.NofM+1)*sizeof(vehicle_struct)));
     if (!v) nrerror("allocation failure in read_models()");
     /* Read models: */
     for (m=1;m<=simulation.NofM;m++) {
           if(m!=(int) read_expr("MODEL",&ptr))
                 nrerror("Wrong Model Number in file model.dat");
           v[m].ident=m;                                    /* store model number */
           find_token("COSSERAT_POINT",&ptr);   /* Cosserat point related material: */
           /* Read data: */
           v[m].Cosserat_point.m=read_expr("MASS",&ptr);
           Ix=read_expr("IX",&ptr);
           Iy=read_expr("IY",&ptr);
           Iz=read_expr("IZ",&ptr);
           E=read_expr("E",&ptr);
           nu=read_expr("NU",&ptr);
           vol=read_expr("VOLUME",&ptr);
           /* Calculate material constants: */
           v[m].Cosserat_point.lam=0.5*vol*E*nu/(1+nu)/(1-2*nu);
           v[m].Cosserat_point.tm=0.5*vol*E/(1+nu);
           /* Calculate inertia matrix and its inverse: */
           v[m].Cosserat_point.I=M=matrix(N,N);
           for (i=1;i<=N;i++) for (j=1;j<=N;j++) M[i][j]=0.0;       /* zero matrix */
           M[1][1]=M[2][2]=M[3][3]=v[m].Cosserat_point.m;
           M[4][4]=M[5][5]=M[6][6]=0.5*(-Ix+Iy+Iz);
           M[7][7]=M[8][8]=M[9][9]=0.5*(Ix-Iy+Iz);
           M[10][10]=M[11][11]=M[12][12]=0.5*(Ix+Iy-Iz);
           v[m].Cosserat_point.I_inv=matrix(N,N);
           matrix_inverse(M, N, v[m].Cosserat_point.I_inv);
           find_token("SUSPENSION",&ptr);           /* Suspension related material: */
           /* Read data: */
           v[m].suspension.X1[1]=v[m].suspension.X1[2]= read_expr("L1",&ptr);
           v[m].suspension.X1[3]=v[m].suspension.X1[4]= -read_expr("L2",&ptr);
           v[m].suspension.X2[2]=v[m].suspension.X2[4]=
                 -(v[m].suspension.X2[1]=v[m].suspension.X2[3]=
                       0.5*read_expr("B",&ptr));
           v[m].suspension.X3[1]=v[m].suspension.X3[2]= -read_expr("H1",&ptr);
           v[m].suspension.X3[3]=v[m].suspension.X3[4]= -read_expr("H2",&ptr);
           v[m].suspension.spring_ref=read_expr("SPRING_REF",&ptr);
           v[m].suspension.C[1]=v[m].suspension.C[2]=read_expr("C1",&ptr);
           v[m].suspension.C[3]=v[m].suspension.C[4]=read_expr("C2",&ptr);
           v[m].suspension.D[1]=v[m].suspension.D[2]=read_expr("D1",&ptr);
           v[m].suspension.D[3]=v[m].suspension.D[4]=read_expr("D2",&ptr);
           /* Calculate influence matrix: */
           v[m].suspension.infl=matrix(N,N);
           for (i=1;i<=N;i++) for (j=1;j<=N;j++) v[m].suspension.infl[i][j]=0.0;
           I[0][0]=I[0][1]=I[0][2]=I[0][3]=1.0;
           for (i=0;i<=3;i++) {
                I[1][i]=v[m].suspension.X1[i+1];
                I[2][i]=v[m].suspension.X2[i+1];
                I[3][i]=v[m].suspension.X3[i+1];
           }
           for (i=0;i<=3;i++) for (j=0;j<=3;j++) for (k=1;k<=3;k++) /* fill in */
                v[m].suspension.infl[3*i+k][3*j+k]=I[i][j];
           /* Read remaining data for current model: */
           v[m].tire.tau_inv=1.0/read_expr("TIRE",&ptr);
           find_token("CONTACT",&ptr);
           v[m].contact.dimension_box[1]=read_expr("A1",&ptr);
           v[m].contact.dimension_box[2]=read_expr("A2",&ptr);
           v[m].contact.dimension_box[3]=read_expr("A3",&ptr);
           find_token("EQUILIBRIUM",&ptr);
           /* Define the equilibrium state of the vehicle: */
           v[m].init.r3=read_expr("R3",&ptr);        /* Height of center of mass */
           v[m].init.F=matrix(3,3);                  /* Deformation gradient */
           for (i=1;i<=3;i++) {
                str[1]='0'+i;
                for (j=1;j<=3;j++) {
                      str[2]='0'+j;
                      v[m].init.F[j][i]=read_expr(str,&ptr);
                }
           }
     }
     free(buffer);                   /* Free memory allocated by read_file */
}

/****************************************************************************/
/*                       Read platoon data from file                        */
/****************************************************************************/
void read_vehicles(void)
/* Read vehicle models from the file simulation.in_file. */
{
     vehicle_struct *vehicle;        /* short for simulation.vehicle */
     char *buffer, *ptr;             /* ptr points to a character inside buffer[] */
     char error_msg[]="allocation failure in read_vehicles()";
     int NofV;                       /* Number of vehicles */
     int i, j, k, m, v;
     /* intermediate variables: */
     double theta, Fij, vel;
     Matrix Q=matrix(3,3);
     char *read_file(char *filename);
     double read_expr(char token[], char **ptr);
     void find_token(char token[], char **ptr);

     /* Read the reduced file contents into the buffer array: */
     ptr=buffer=read_file(simulation.in_file);
     /* ptr points to start of buffer. */
     NofV=simulation.NofV=(int) read_expr("NUMBER_OF_VEHICLES",&ptr);
     /* Allocate an array of vehicles: */
     simulation.vehicle=vehicle=
           (vehicle_struct *) malloc((size_t) ((NofV+1)*sizeof(vehicle_struct)));
     if (!vehicle) nrerror(error_msg);
     /* Associate vehicles and initial conditions with a model: */
     for (v=1;v<=NofV;v++) {
           m=(int) read_expr("VEHICLE_HAS_MODEL",&ptr);
           /* Each vehicle is a copy of a model and all vehicles of a certain model
           share some memory through pointers! */
           if (m>0 && m<=simulation.NofM) {
                 vehicle[v]=simulation.model[m];   /* copy model structure */
                 vehicle[v].ident=v;               /* store vehicle number */
                 /* allocate individual memory: */
                 vehicle[v].z=vector(2*N+4);
                 vehicle[v].contact.force=vector(2*N);
                 vehicle[v].contact.previous=matrix(NofV,2);
                 vehicle[v].contact.multiplier=matrix(NofV,2);
                 /* initialize: */
                 for (i=1;i<=NofV;i++) for (j=1;j<=2;j++) {
                       vehicle[v].contact.multiplier[i][j]=0.0;
                       vehicle[v].contact.previous[i][j]=Pi/4.0;
                 }
           } else {
                 printf("\n\n Model nummer %d does not exist\n\n",m);
                 exit(EXIT_FAILURE);
           }
           find_token("INITIALLY_WITH",&ptr);
           /* Position of center of mass: */
           vehicle[v].z[1]=read_expr("X",&ptr);
           vehicle[v].z[2]=read_expr("Y",&ptr);
           vehicle[v].z[3]=simulation.model[m].init.r3;
           /* orientation means a rigid body rotation about the vertical axis: */
           theta=read_expr("ORIENTATION",&ptr);
           theta *=Pi/180;
           Q[1][1]=Q[2][2]=cos(theta);      /* rotation matrix */
           Q[2][1]=sin(theta);
           Q[1][2] = -Q[2][1];
           Q[1][3]=Q[3][1]=Q[2][3]=Q[3][2]=0.0;
           Q[3][3]=1.0;
           for (i=1;i<=3;i++) for (j=1;j<=3;j++) {  /* F=QF_equilibrium */
                Fij=0.0;
                for (k=1;k<=3;k++) Fij+=Q[i][k]*simulation.model[m].init.F[k][j];
                vehicle[v].z[3*j+i]=Fij;            /* copy F to the state vector */
           }
           /* Velocity of the center of mass: */
           vel=read_expr("SPEED",&ptr);
           vehicle[v].z[13]=vel*cos(theta);
           vehicle[v].z[14]=vel*sin(theta);
           for (j=15;j<=STATES;vehicle[v].z[j++]=0.0);
           /* tire speed */
           vehicle[v].tire.speed=read_expr("TIRE_SPEED",&ptr);
           vehicle[v].tire.driven= (fabs(vehicle[v].tire.speed)<=0.1) ? FALSE : TRUE;
           /* Steer angle: */
           vehicle[v].suspension.steer_angle=read_expr("STEERING",&ptr)*Pi/180.;
     }
     free_matrix(Q);
     free(buffer);                   /* free memory allocated by read_file */
}

/****************************************************************************/
/*                               Supplements                                */
/****************************************************************************/
char *read_file(char *filename)
/* Read the contents of the file 'filename' into a string whose adress is then
returned. Sequences of white space characters are reduced to a single space.
Everything between a '%' character and the following newline character is
considered a comment and ignored. The return string is allocated using malloc().
The corresponding memory must be freed by the calling function. The term 'white
space' is defined in any C manual. */
{
     FILE *file;
     int filelength;
     char *buffer, *ptr;             /* restored */
     char c;           /* Temporary storage place for current character. */
     int space=FALSE;  /* Indicates contnuous white space to be ignored. */
     int comment=FALSE;                /* Indicates a comment which is ignored. */

     /* Open file for reading: */
     if ((file=fopen(filename,"r")) == NULL) nrerror("cannot open model file");
     setvbuf(file,NULL,_IOFBF,BUFSIZ);
     /* determine length of file and create a buffer of that size: */
     for (filelength=0;fgetc(file)!=EOF;filelength++);
     ptr=buffer=(char *) malloc((size_t) ((filelength+3)*sizeof(char)));
     if (!buffer) nrerror("allocation failure in read_file()");
     rewind(file);                   /* back to start of file */
     /* copy file to buffer and ignore comments, multiple spaces, etc.: */
     while ((c=fgetc(file))!=EOF) {           /* Read character from file. */
           if (c=='%') {             /* This indicates a comment. Ignore everything */
                                     /* until newline character is found. */
                 comment=TRUE;
                 if (!space) {       /* A comment is trated as white space. */
                       space=TRUE;
                       *ptr++ =' ';
                 }
                 continue;
           }
           if (comment) {                         /* Ignore comments. */
                 if (c=='\n') comment=FALSE;      /* The end of the line ends a comment. */
                 continue;
           }
           if (isspace(c)) {
                 if (!space) {       /* A sequence of white space characters is */
                       space=TRUE;
                       *ptr=' ';     /* reduced to single space in the buffer. */
                       ptr++;
                 }
                 continue;
           }
           space=FALSE;
           *ptr++=c;                                            /* restored */
     }
     *ptr++=' ';                     /* add a space as break for other functions */
     *ptr='\0';                      /* end of string */
     fclose(file);
     return buffer;
}

void find_token(char token[], char **ptr)
/* This function reads a word from the position that *ptr points to and compares
it to token. If there is a match, then after execution, *ptr points to the
character following the word. If there is no match, the program is aborted and
an error message is generated. A space character leading the word is ignored.
The word ends with the occurrence of a space character. */
{
     char word[TOKEN_LENGTH+1];
     int i=0;

     if (**ptr==' ') *ptr+=1;        /* skip a leading space character */
     while (**ptr!=' ') {            /* Read word */
           word[i++]=toupper(**ptr); /* Uppercase */
           *ptr+=1;                  /* restored: Advance one character */
     }
     word[i]='\0';                   /* terminate string */
     if (strcmp(token,word)) {
          printf("\n\n Unexpected token %s. %s expected.\n\n",word,token);
          exit(EXIT_FAILURE);
     }
}

double read_expr(char token[], char **ptr)
/* This function works as find_token() (see description there) but also returns
the number which follows the token. The number has to be in the that can be
converted by atof() (see C manual for reference). */
{
     int i=0;
     char word[31];
     void find_token(char token[], char **ptr);

     find_token(token,ptr);          /* restored */
     *ptr+=1;                        /* restored: skip the space before the number */
     /* Read word */
     while (**ptr!=' ') {
          word[i++]=**ptr;
          *ptr+=1;                   /* Advance one character */
     }
     word[i]='\0';                   /* terminate string */
     return atof(word);              /* conversion */
}

/****************************************************************************/
/*                             Initialize Road                              */
/****************************************************************************/
void road_init(void)
/* Initialize the road section of the simulation structure. In particular,
  XC[NP+1][4], YC[NP+1][4] and ZC[NP+1][4] are the coefficients of cubic
  polynominals for NP+1 segments, where NP is the number of nodal points. */
{
     char dummy[200];
     Matrix XIN, *C;                 /* Coefficients of cubic polynomials */
     int NP;                         /* number of nodal points */
     int i, j, k;
     double p;
     FILE *road_geo, *ofp;
     int seg_init(Vector);

     /* Read data from file road.dat */
     if((road_geo=fopen("road.dat","r"))==NULL) nrerror("Cannot open road.dat");
     fscanf(road_geo,"%s",dummy);
     if (strlen(dummy) !=17) nrerror("Input data error in road.dat.");
     fscanf(road_geo,"%d",&NP);
     simulation.road.nodal_points=NP;
     XIN=simulation.road.XIN=matrix(NP+2,4); /* coordinates of NP nodal points */
     /* Allocate matrix array C, the coefficients of cubic polynomials where
        there are NP+1 segment numbers: */
     simulation.road.C=C=(Matrix *) malloc((size_t) (4*sizeof(Matrix)));
     if (!C) nrerror("allocation failure in road_init():C");
     for (i=1;i<=3;i++) C[i]=simulation.road.C[i]=matrix(NP+1,4);
     fscanf(road_geo,"%s",dummy);
     if (strlen(dummy) != 24) nrerror("Input data error in road.dat.");
     /* Read the 2nd to (NP+1)th points from road.dat. */
     /* The first and NP+2 points are virtual points. */
     /**********************************************************************/
     /*    1  2  3  4  5  6 .....       NP         original nodal points    */
     /* 1---2--3---4--5--6---7 ..... ----NP+1----NP+2 modified nodal points */
     /*   1  2   3  4  5  6  ....    NP    NP+1     segment number          */
     /**********************************************************************/
     for (i=2;i<=NP+1;i++)
           fscanf(road_geo,"%lf %lf %lf %lf",XIN[i]+1,XIN[i]+2,XIN[i]+3,XIN[i]+4);
     fscanf(road_geo,"%s",dummy);
     if (strlen(dummy) != 11) nrerror("Input data error in road.dat.");
     fclose(road_geo);
     /* add virtual points at both ends: */
     XIN[1][1]=XIN[2][1]-10.*(XIN[3][1]-XIN[2][1]);
     XIN[1][2]=XIN[2][2]-10.*(XIN[3][2]-XIN[2][2]);
     XIN[1][3]= XIN[2][3];  /* same height as that of first nodal point. */
     XIN[1][4]=0.0;
     XIN[NP+2][1]=XIN[NP+1][1]+10.*(XIN[NP+1][1]-XIN[NP][1]);
     XIN[NP+2][2]=XIN[NP+1][2]+10.*(XIN[NP+1][2]-XIN[NP][2]);
     XIN[NP+2][3]= XIN[NP+1][3]; /* same height as that of last nodal point. */
     XIN[NP+2][4]=0.0;
     /* let the first segment be a straight line. */
     for (j=1;j<=3;j++) {
           C[j][1][4]=XIN[1][j];
           for (i=1;i<=3;i++) C[j][1][i]=0.0;
     }
     p = (XIN[1][1] + XIN[2][1])/3;
     C[1][1][3] = -11*XIN[1][1]/2+9*p-9*p+XIN[2][1];
     C[1][1][2]=9*XIN[1][1]-45*p/2+18*2*p-9*XIN[2][1]/2;
     C[1][1][1] = (-9*XIN[1][1]+27*p-27*2*p+9*XIN[2][1])/2;
     /**********************************************************************/
     /* Compute the cubic polynomial:                                      */
     /* X(s)=XC[k][1]s^3+XC[k][2]s^2+XC[k][3]s+XC[k][4]=0                  */
     /* by the fisrt four nodal points in road.dat, where                  */
     /* k is the segment number.                                           */
     /**********************************************************************/
     for (i=1;i<=3;i++) {
          /* The coefficients of 2nd curve segment */
          C[i][2][4]=XIN[2][i];
          C[i][2][3] = -11*XIN[2][i]/2+9*XIN[3][i]-9*XIN[4][i]/2+XIN[5][i];
          C[i][2][2]=9*XIN[2][i]-45*XIN[3][i]/2+18*XIN[4][i]-9*XIN[5][i]/2;
          C[i][2][1] = (-9*XIN[2][i]+27*XIN[3][i]-27*XIN[4][i]+9*XIN[5][i])/2;
          /* Coefficients of 3rd and 4th segments are the same as for the 2nd: */
          for (j=1;j<=4;j++) C[i][3][j]=C[i][4][j]=C[i][2][j];
     }
     /**********************************************************************/
     /* Compute remaining cubic polynomials by the continuty               */
     /* of nodal points, first and second derivatives.                     */
     /**********************************************************************/
     for (j=1;j<=3;j++) for (i=5;i<=NP+1;i++) {
          C[j][i][4] = XIN[i][j];
          C[j][i][3] = C[j][i-1][3]+2*C[j][i-1][2]+3*C[j][i-1][1];
          C[j][i][2] = C[j][i-1][2]+3*C[j][i-1][1];
          C[j][i][1] = XIN[i+1][j]-XIN[i][j]-C[j][i-1][3]-3*C[j][i-1][2]-6*C[j][i-1][1];
     }
     /**********************************************************************/
     /* Output the coefficients of polynomials                             */
     /**********************************************************************/
     ofp= fopen("co","w");
     for (i=2;i<=NP+1;i++) {
          for (k=1;k<=3;k++) for (j=1;j<=4;j++) fprintf(ofp,"%f\t",C[k][i][j]);
          fprintf(ofp,"\n\n");
     }
     fclose(ofp);
     /**********************************************************************/
     /* Determine the initial segment number and the                       */
     /* corresponding parameter of each vehicle                            */
     /**********************************************************************/
     for (i=1;i<=simulation.NofV;i++)
                                    /* initial guess of parameter s: */
          switch (simulation.vehicle[i].road.segment
                            =seg_init(simulation.vehicle[i].z)) {
          case 3: simulation.vehicle[i].road.parameter=1.0/3.0;
                  break;
          case 4: simulation.vehicle[i].road.parameter=2.0/3.0;
                  break;
          case 5: simulation.vehicle[i].road.parameter=1.0;
          default: simulation.vehicle[i].road.parameter=0.0;
          }
     /* convert angle in road.dat from degree to radian: */
     for (i=2;i<=NP+1;i++) XIN[i][4] *= Pi/180.;
}

/****************************************************************************/
/*                          Segment initialization                          */
/****************************************************************************/
int seg_init(Vector r)
/* Returns the initial segment number of the vehicle. Vector r is the
     position of vehicle. */
{
      Matrix XIN=simulation.road.XIN;
      Matrix *C=simulation.road.C;
      int i, k;
      double dist_23, dist_34, rad1, rad2, rad3, rad4, rad5;
      Matrix cen=matrix(6,3); /* coordinates of the centers of the spheres */

      /* Initially, a vehicle has to be within the first four segments. Thus,
            define the five spheres by the first five nodal points: */
      for (i=1;i<=3;i++) for (k=1;k<=5;k++) cen[k][i]=XIN[k][i];
      rad1=dt(cen[1],cen[2]);
      rad2= min(rad1, dist_23=dt(cen[2],cen[3]));
      rad3= min(dist_23, dist_34=dt(cen[3],cen[4]));
      rad4= min(dist_34, rad5=dt(cen[4],cen[5]));
      /* Is vehicle inside any of the spheres? */
      if (dt(r,cen[1]) <= rad1) k=1;
      else if (dt(r,cen[5]) <= rad5) k=4;
      else if (dt(r,cen[2]) <= rad2) k=(projection(C,cen[2],r,2) <= 0.0) ? 1 : 2;
      else if (dt(r,cen[3]) <= rad3) k=(projection(C,cen[3],r,3) < 0.0) ? 2 : 3;
      else if (dt(r,cen[4]) <= rad4) k=(projection(C,cen[4],r,4) <= 0.0) ? 3 : 4;
      else if ((dist_34>sqrt(rad3*rad3-LANEWIDTH*LANEWIDTH)+sqrt(rad4*rad4-LANEWIDTH*LANEWIDTH))
                          | (min(rad3,rad4)<dist_34) ) {
            /* If the spheres 3 & 4 don't overlap over at least the lanewidth, then a
                  sixth sphere is needed: */
            for (i=1;i<=3;i++) cen[6][i]=(XIN[3][i]+XIN[4][i])/2;
            if (dt(r,cen[6]) <= dt(cen[3],cen[4])/2) k=3;
            else nrerror("Vehicle position on road cannot be determined!");
      }
      else nrerror("The initial position of vehicle is not in the first four segments!");
      free_matrix(cen);
      return k;
}
