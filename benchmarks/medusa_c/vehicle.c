/****************************************************************************/
/*                              vehicle.c v2.0                              */
/* created by Peter Varadi, last modified June 30, 1999, lines 377          */
/****************************************************************************/
/* The code in this file calculates                                         */
/* - the constraint forces acting on the individual vehicles when they      */
/*   are in contact with each other                                         */
/* - the equations of motion of a vehicle                                   */
/* - the total energy of a vehicle                                          */
/* Functions:                                                               */
/* - set_constraint_forces()  line 39                                       */
/* - equations_of_motion()    line 135                                      */
/* - tire_forces()            line 287                                      */
/* - energy()                 line 340                                      */
/****************************************************************************/
/* Transcribed from the MEDUSA report (UCB-ITS-PRR-99-32), Appendix F, for   */
/* benchmarking only; see README.md for what was repaired. The block under  */
/* #ifdef MEDUSA_TRACE is not MEDUSA's (verification build only).           */
#include <stdio.h>
#include <math.h>
#include "common.h"

extern simu_struct simulation;
#ifdef MEDUSA_TRACE
extern FILE *medusa_trace_file;
#endif

/* These definitions reflect the 12 vector components and 24 states of the
position vector and the directors of the Cosserat point: */
#define N 12
#define twoN 24

/****************************************************************************/
/*                         calculate contact forces                         */
/****************************************************************************/
#define CONSTRAINT_MULTIPLIER1 2e4 /* for updating the Lagrange multipliers */
#define CONSTRAINT_MULTIPLIER2 100

int set_constraint_forces(void)
/* This function repeatedly calls detect_contact() (defined in contact.c) to
  determine if any two vehicles are in contact. If so, the function calculates
  the constraint forces acting on these vehicles. The function returns TRUE if
  any vehicles are in contact, FALSE otherwise. */
{
    vehicle_struct *vehicle=simulation.vehicle; /* substitutions */
    Vector z1, z2, c1, c2, gamma;
    Matrix F=matrix(3,3);
    double previous[5];        /* contact points from previous time_step */
    double normal[4];          /* surface normal vector */
    double rho1[4], rho2[4];   /* restored: contact points */
    double X1[4], X2[4];       /* Cosserat labels of the contact points */
    double phi1, phi2, n1, n2;
    int i,j, return_value=FALSE, cv, av;
    int detect_contact(Vector, vehicle_struct *,vehicle_struct *,
                       Vector, Vector, Vector);

    for (cv=1;cv<=simulation.NofV;cv++) for (i=1;i<=twoN;i++)
          vehicle[cv].contact.force[i]=0.0;                  /* reset contact forces */
    for (cv=1;cv<=simulation.NofV;cv++) for (av=cv+1;av<=simulation.NofV;av++) {
      /* substitutions: */
      z1=vehicle[cv].z;
      z2=vehicle[av].z;
      c1=vehicle[cv].contact.force;
      c2=vehicle[av].contact.force;
      gamma=vehicle[cv].contact.multiplier[av];
      previous[1]=vehicle[cv].contact.previous[av][1];
      previous[2]=vehicle[cv].contact.previous[av][2];
      previous[3]=vehicle[av].contact.previous[cv][1];
      previous[4]=vehicle[av].contact.previous[cv][2];
      /* Are the the two vehicles in contact? */
      if (detect_contact(previous, vehicle+cv, vehicle+av, normal, rho1, rho2)) {
            return_value=TRUE;
            /* position constraint: */
            phi1=(rho1[1]-rho2[1])*normal[1]+(rho1[2]-rho2[2])*normal[2]+
                 (rho1[3]-rho2[3])*normal[3];
            /* labels X^i for the contact point on each of the Cosserat points: */
            for (i=1;i<=3;i++) {
                  X1[i]=rho1[i];
                  X2[i]=z1[i]-z2[i]+rho2[i];
            }
            for (i=1;i<=3;i++) for (j=1;j<=3;j++) F[i][j]=z1[3*j+i];
            lin_solve(F,3,X1);
            for (i=1;i<=3;i++) for (j=1;j<=3;j++) F[i][j]=z2[3*j+i];
            lin_solve(F,3,X2);
            /* Calculate velocity constraint: */
            phi2=0.0;
            for (i=1;i<=3;i++)
              phi2+=(z1[12+i]+X1[1]*z1[15+i]+X1[2]*z1[18+i]+X1[3]*z1[21+i]-
                     z2[12+i]-X2[1]*z2[15+i]-X2[2]*z2[18+i]-X2[3]*z2[21+i])*normal[i];
            gamma[1]-=CONSTRAINT_MULTIPLIER1*phi1;
            gamma[2]-=CONSTRAINT_MULTIPLIER2*phi2;
#ifdef MEDUSA_TRACE
            fprintf(medusa_trace_file,"PAIR %d %d t=%.9f phi1=%.9e phi2=%.9e g1=%.9e g2=%.9e"
                    " n=%.9f,%.9f,%.9f rho1=%.6f,%.6f,%.6f rho2=%.6f,%.6f,%.6f\n",
                    cv,av,simulation.integrate.time,phi1,phi2,gamma[1],gamma[2],
                    normal[1],normal[2],normal[3],rho1[1],rho1[2],rho1[3],
                    rho2[1],rho2[2],rho2[3]);
#endif
            /* Calculate contact forces: */
            for(i=1;i<=3;i++) {
                  n1=gamma[1]*normal[i];
                  n2=gamma[2]*normal[i];
                  c1[i]+=n1;
                  c2[i]-=n1;
                  c1[12+i]+=n2;
                  c2[12+i]-=n2;
                  for (j=1; j<=3; j++) {
                        c1[3*j+i]+=X1[j]*n1;
                        c2[3*j+i]-=X2[j]*n1;
                        c1[12+3*j+i]+=X1[j]*n2;
                        c2[12+3*j+i]-=X2[j]*n2;
                  }
            }
      } else gamma[1]=gamma[2]=0.0;    /* no contact */
      /* store for next time-step: */
      vehicle[av].contact.multiplier[cv][1]=gamma[1];
      vehicle[av].contact.multiplier[cv][2]=gamma[2];
      vehicle[cv].contact.previous[av][1]=previous[1];
      vehicle[cv].contact.previous[av][2]=previous[2];
      vehicle[av].contact.previous[cv][1]=previous[3];
      vehicle[av].contact.previous[cv][2]=previous[4];
    }
    free_matrix(F);
    return return_value;
}

/****************************************************************************/
/*             calculate equations of motion of a single vehicle            */
/****************************************************************************/
void equations_of_motion(Vector dzdt, vehicle_struct *vcl)
/* This function calculates the time derivative dzdt of a vehicle's state
     vector. Input is the pointer vcl to the vehicle data. */
{
     Vector r=vcl->z, v=vcl->z+12;
     Vector d1=vcl->z+3, d2=vcl->z+6, d3=vcl->z+9;
     Vector w1=vcl->z+15, w2=vcl->z+18, w3=vcl->z+21;
     double a, laged_alpha, S;          /* Slip and laged slip for the tire */
     double vi[4];                      /* velocity of an assembly point */
     double d11, d12, d13, d22, d23, d33, lam, tm; /* constitutive quantities */
     /* temporary variables for projection, steering, suspension and tires: */
     double sinphi=sin(vcl->suspension.steer_angle);
     double cosphi=cos(vcl->suspension.steer_angle);
     double dummy_vector[N+1], dumdum, diff[4], Fx, Fy, Fz;
     double e1[4], e2[4], e3[4], exp[4], eyp[4], ex[4], ey[4], ez[4], tp[4], vt[4];
     double k[N+1]={0.0}, forces[N+1]={0.0};     /* intrinsic and applied forces */
     /* placeholders for variables within the simulation structure: */
     Matrix M_inverse=vcl->Cosserat_point.I_inv;
     Matrix influence_matrix=vcl->suspension.infl;
     double *X1=vcl->suspension.X1, *X2=vcl->suspension.X2, *X3=vcl->suspension.X3;
     double *C=vcl->suspension.C, *D=vcl->suspension.D;
     double spring_ref=vcl->suspension.spring_ref;
     long double dummy;                 /* Long double reduces numerical error. */
     int i,j;
     void road(Vector normal, Vector tangent, Vector tp, vehicle_struct *v);
     void tire_forces(double *, double *, double, double, double);

     road(e3,e1,tp,vcl);                /* road vector triad */
     vector_product(e2,e3,e1);
     dumdum=DOT3(d1,e3);                /* rear wheel heading vectors */
     for (i=1;i<=3;i++) {
          exp[i]=d1[i]-dumdum*e3[i];
          ez[i] = -e3[i];
     }
     dumdum=sqrt(DOT3(exp,exp));
     for (i=1;i<=3;exp[i++]/=dumdum);
     vector_product(eyp,ez,exp);

     /****************************************/
     /* Tire and suspension forces for each wheel: */
     /****************************************/
     for (j=1; j<=4; j++) {
       if (j>2) for (i=1;i<=3;i++) {    /* restored: rear wheels are not steered */
            ex[i]=exp[i];
            ey[i]=eyp[i];
       } else for (i=1;i<=3;i++) {
            ex[i]=cosphi*exp[i]-sinphi*eyp[i];
            ey[i]=sinphi*exp[i]+cosphi*eyp[i];
       }
       laged_alpha=vcl->z[24+j];        /* lagged slip angle of the current tire */
       /* Calculate vt (=\tilde{v} from the velocity vi[] of the assembly point: */
       for (i=1;i<=3;i++) vi[i]=v[i]+X1[j]*w1[i]+X2[j]*w2[i]+X3[j]*w3[i];
       dumdum=DOT3(vi,e3);
       for (i=1;i<=3;i++) vt[i]=vi[i]-dumdum*e3[i];
       /* suspension force: */
       for (i=1;i<=3;i++) diff[i]=r[i]+X1[j]*d1[i]+X2[j]*d2[i]+X3[j]*d3[i]-tp[i];
       Fz= -(C[j]*(DOT3(diff,e3)-spring_ref)+D[j]*DOT3(vi,e3)); /* normal force */
       if (Fz<0.0) printf("\n Tire %d lift off!",j);
       /* wheel forces: */
       if (Fz>0.0) {
            S= (vcl->tire.driven && j<3) ? 1.0-(vcl->tire.speed)/(DOT3(vt,ex)) : 0.0;
            a=atan2(DOT3(vt,ey),DOT3(vt,ex));  /* slip angle for next time step */
            dzdt[24+j]=vcl->tire.tau_inv*(a-laged_alpha); /* tire state vector */
            tire_forces(&Fx,&Fy,Fz,laged_alpha,S);
       } else Fx=Fy=Fz=0.0;
       for (i=1;i<=3;i++) forces[i+3*(j-1)]=Fx*ex[i]-Fy*ey[i]-Fz*ez[i];
     }

     /****************************************/
     /* Constitutive Equations */
     /****************************************/
     d11=DOT3(d1,d1)-1.0;
     d12=DOT3(d1,d2);
     d13=DOT3(d1,d3);
     d22=DOT3(d2,d2)-1.0;
     d23=DOT3(d2,d3);
     d33=DOT3(d3,d3)-1.0;
     tm=vcl->Cosserat_point.tm;
     lam=vcl->Cosserat_point.lam*(d11+d22+d33);
     for (i=1;i<=3;i++) {
          k[i]=0.0;
          k[3+i]=lam*d1[i]+tm*(d11*d1[i]+d12*d2[i]+d13*d3[i]);
          k[6+i]=lam*d2[i]+tm*(d12*d1[i]+d22*d2[i]+d23*d3[i]);
          k[9+i]=lam*d3[i]+tm*(d13*d1[i]+d23*d2[i]+d33*d3[i]);
     }

     /****************************************/
     /* Build return vector dzdt: */
     /****************************************/
     for (i=1;i<=N;i++) {
          dzdt[i]=vcl->z[N+i];
          dummy=0.0;
          for (j=1;j<=N;j++) dummy+=influence_matrix[i][j]*forces[j];
          dummy_vector[i]=dummy-k[i];
     }
     dummy_vector[3] -= 9.81*vcl->Cosserat_point.m;       /* gravity */
     for (i=1;i<=N;i++) {                   /* multiply with inverse mass matrix */
          dummy=0.0;
          for (j=1;j<=N;j++) dummy+=M_inverse[i][j]*dummy_vector[j];
          dzdt[i+N]=dummy;
     }
     for(i=1;i<=twoN;i++) dzdt[i]+=vcl->contact.force[i];  /* contact force */
}

/****************************************************************************/
/*                                tire model                                */
/****************************************************************************/
/* Goodyear 185SR14 */
#define A0 7092.7808       /* 1583.21*4.48 */
#define A1 11.94
#define A2 13571.0848      /* 3029.26*4.48 */
#define A3 0.264           /* check dimensions! */
#define A4 -1765.46        /* check dimensions! */
#define B1 -0.0000254464285714286  /* -1.140E-04/4.48 */
#define B3 1.007
#define B4 -5.2913743622449e-11    /* -1.062E-09/4.48/4.48 */
#define K1 -2.595E-04      /* check dimensions! */
#define K2 2.198E-04       /* check dimensions! */
#define K3 0.073           /* check dimensions! */
#define SNT 85             /* test skid number */
#define SNP 85             /* pavement skid number */
#define CSFZ 18
#define Kmu 0.2
#define FZT 1160           /* tire design load at operating pressure (lbs) */
#define TW 5               /* tread width (inches) */
#define Tp 28              /* tire pressure (psi) */
/* bias ply tire: */
#define Ka 0.2
#define c1 0.535
#define c2 1.05
#define c3 1.15
#define c4 0.8

void tire_forces(double *Fx, double *Fy, double Fz,
                 double slip_angle, double slip_ratio)
/* Calculates the tire longitudinal (Fx) and side (Fy) force using the modified
      STI/CalSpan tire model. The inputs are the slip_angle, longitudinal slip
      slip_ratio and the normal force Fz. */
{
     double s=slip_ratio, alpha=slip_angle;
     double sig, f, Kc_prime, mu, Ks, Kc, mu0, ap0;
     double sina, cosa, tana, S1, S2, S3;

     /* The formulas work only applicable for slip ratios between -1 and 1 and for
      slip angles smaller than 90 degrees. We need to extrapolate: */
      if (fabs(s)>1) s=(-1.0);
      if (fabs(alpha) > .5*Pi) alpha=Pi-alpha;
      if (fabs(s)==0.0 && fabs(alpha)==0.0) *Fx=*Fy=0.0;
      else {
            tana=tan(alpha);
            sina=sin(alpha);
            cosa=cos(alpha);
            /* tire contact patch length: */
            ap0=0.0768*sqrt(Fz*FZT)/(TW*(Tp+5.0));
            /* lateral and longitudinal stiffness coefficients: */
            Ks=2.0/(ap0*ap0)*(A0+A1*Fz-A1/A2*Fz*Fz);
            Kc=2.0/(ap0*ap0)*Fz*CSFZ;
            /* peak tire/road coefficient of friction: */
            mu0=(B1*Fz+B3+B4*Fz*Fz)*SNP/SNT;
            /* slip to slide transition: */
            S3=sqrt(sina*sina+s*s*cosa*cosa);
            Kc_prime=Kc+(Ks-Kc)*S3;
            mu = mu0*(1.0-Kmu*S3);
            /* composite slip and force saturation function: */
            S1=Ks*Ks*tana*tana;
            sig=Pi*ap0*ap0/(8*mu0*Fz)*sqrt(S1+Kc*Kc*s*s/((1-s)*(1-s)));
            f=sig*(sig*(c1*sig+c2)+4.0/Pi)/(sig*(sig*(c1*sig+c3)+c4)+1.0);
            /* side and longitudinal force: */
            S2=mu*Fz*f/sqrt(S1+Kc_prime*Kc_prime*s*s);
            *Fy= S2*Ks*tana;
            *Fx= (-S2*Kc_prime*s);
     }
}

/****************************************************************************/
/*                       total energy of the vehicle                        */
/****************************************************************************/
double energy(vehicle_struct *vehicle)
/* The total energy of a vehicle is calculated. The vehicle parameters are in
     the structure vehicle. */
{
     Vector r=vehicle->z, d1=vehicle->z+3, d2=vehicle->z+6, d3=vehicle->z+9;
     double *C=vehicle->suspension.C;
     double *X1=vehicle->suspension.X1;
     double *X2=vehicle->suspension.X2;
     double *X3=vehicle->suspension.X3;
     double s_ref=vehicle->suspension.spring_ref;
     Matrix M=vehicle->Cosserat_point.I;
     long double dummy[N+1];
     double d11, d12, d13, d22, d23, d33, energy=0.0;
     int i,j;

     /* Calculate kinetic energy of Cosserat point: T=1/2 v.Mv */
     for (i=4;i<=N;i++) {
           dummy[i]=0.0;
           for (j=4;j<=N;j++) dummy[i]+=M[i][j]*vehicle->z[N+j];
     }
     for (i=4;i<=N;i++) energy+=0.5*dummy[i]*vehicle->z[i+N];
     /* Add stored energy of cosserat point: */
     d11 = DOT3(d1,d1)-1.0;
     d12 = DOT3(d1,d2);
     d13 = DOT3(d1,d3);
     d22 = DOT3(d2,d2)-1.0;
     d23 = DOT3(d2,d3);
     d33 = DOT3(d3,d3)-1.0;
     energy+=0.25*(vehicle->Cosserat_point.lam*(d11+d22+d33)*(d11+d22+d33)+
                   vehicle->Cosserat_point.tm*(d11*d11+d22*d22+d33*d33)+
                   2*vehicle->Cosserat_point.tm*(d12*d12+d13*d13+d23*d23));
     /* Add energy stored in the suspensions: */
     for (i=1;i<=4;i++)
          energy+=0.5*(C[i]*square(r[3]+X1[i]*d1[3]+X2[i]*d2[3]+X3[i]*d3[3]-s_ref));
     /* Add potential energy of gravity: */
     return energy+vehicle->Cosserat_point.m*9.81*r[3];
}
