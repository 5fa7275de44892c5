/****************************************************************************/
/*                                 contact.c                                */
/*                               Contact Model                              */
/* created by Gwo-Jeng Lo, last modified on June 30 1999, 1123 lines        */
/****************************************************************************/
/* This file contains 24 functions which do two major jobs:                 */
/* (I) detecting the contact situations of two vehicles,                    */
/* (II) computing the positions of contact points on two vehicles and the   */
/*      direction of contact force acting on the vehicle 2 by vehicle 1.    */
/****************************************************************************/
/* Functions:                                                               */
/* - detect_contact()   line 66       - dist()      line 621                */
/* - info()             line 255      - d_dist1()   line 674                */
/* - eig()              line 282      - d_dist2()   line 725                */
/* - jacobi()           line 296      - d_dist()    line 802                */
/* - eigsrt()           line 380      - pert()      line 935                */
/* - enorm()            line 407      - func()                              */
/* - angle()            line 519      - piksrt()                            */
/* - norm_angle()       line 541      - opp()       line 995                */
/* - pos()              line 555      - search()    line 1052               */
/****************************************************************************/
/* Transcribed from the MEDUSA report (UCB-ITS-PRR-99-32), Appendix F, for   */
/* benchmarking only; see README.md for what was repaired. -DJACOBI_NR       */
/* selects Numerical Recipes' form of jacobi()'s second convergence test.   */
#include <stdio.h>
#include <math.h>
#include "common.h"

#define EP 1.e-4
#define EP1 5.e-7
#define MAXSTEP 20
#define SHIFT1 5.e-2
#define SHIFT2 1.e-6
#define DEV 2e-4
#define DEV1 1.5e-4
#define VARY_X1X2 1
#define VARY_X3X4 2
#define VARY_X 3
#define EXP 0.4   /* Cannot be assigned as an integer. */
#define STEP1MAX 300
#define STEP2MAX 300
#define FREE_MATRIX free_matrix(KHAT1); free_matrix(KHAT2); free_matrix(v1); \
free_matrix(v2); free_matrix(F1); free_matrix(F2);

extern simu_struct simulation;

/* Global Variables */
static double xbar[4]={0.0};      /* relative position of the vehicles */
static double A[4], B[4], null[4];
static double d1[4], d2[4], len1[4], len2[4];   /* eigenvalues of the ellipsoids */
static Matrix KHAT1, KHAT2, v1, v2;

/****************************************************************************/
/*                         main detection procedure                         */
/****************************************************************************/
int detect_contact(Vector state, vehicle_struct *car1, vehicle_struct *car2,
                   Vector n1, Vector r1, Vector r2)
/* Detect contact point between two cars. Inputs are the state={u1,v1,u2,v2} of
the previously found contact point and vehicles car1 and car2 point to the
vehicle geometries. Outputs are position vectors r1, r2 of the contact points
and the normal vector n at that point. Returns TRUE when contact happens, else
FALSE. */
{
 int i,j,step1,step2;
 double delt=10.0*EP;
 double rold1[4],rold2[4],deep[5],en1[4],en2[4],temp[4]; /* deep[5]: was deep[4] */
 double check,pt;
 Matrix F1=matrix(3,3),F2=matrix(3,3);   /* deformation gradients */
 void pos(Vector, Vector, Vector);
 void enorm(Vector, Vector, Vector);
 void eig(Matrix, int, Vector, Matrix);
 void info(Vector, Matrix, Matrix);
 int pert(Vector, double);
 double dist(Vector);
 void d_dist(Vector, Vector);
 void d_dist1(Vector, Vector);
 void d_dist2(Vector, Vector);
 void norm_angle(Vector,int);

 /* n1 is defined in vehicle.c */
 KHAT1=matrix(3,3); KHAT2=matrix(3,3); v1=matrix(3,3); v2=matrix(3,3);
 /* Read the deformation gradients of the two vehicles: */
 F1[1][1]=car1->z[4], F1[1][2]=car1->z[7], F1[1][3]=car1->z[10];
 F1[2][1]=car1->z[5], F1[2][2]=car1->z[8], F1[2][3]=car1->z[11];
 F1[3][1]=car1->z[6], F1[3][2]=car1->z[9], F1[3][3]=car1->z[12];
 F2[1][1]=car2->z[4], F2[1][2]=car2->z[7], F2[1][3]=car2->z[10];
 F2[2][1]=car2->z[5], F2[2][2]=car2->z[8], F2[2][3]=car2->z[11];
 F2[3][1]=car2->z[6], F2[3][2]=car2->z[9], F2[3][3]=car2->z[12];
 for(i=1;i<=3;i++) xbar[i]=car2->z[i]-car1->z[i];
 A[1]=car1->contact.dimension_box[1]/2;
 A[2]=car1->contact.dimension_box[2]/2;
 A[3]=car1->contact.dimension_box[3]/2;
 B[1]=car2->contact.dimension_box[1]/2;
 B[2]=car2->contact.dimension_box[2]/2;
 B[3]=car2->contact.dimension_box[3]/2;
 /* Check the potential contact of two vehicles: */
 if (dt(car2->z,car1->z) <
     (max(A[1],max(A[2],A[3]))+max(B[1],max(B[2],B[3]))+1.e-8)) {
      info(A, F1, KHAT1);
      info(B, F2, KHAT2);
      eig(KHAT1, 3, d1, v1);   /* d1[i]=1/(semi-axes)^2 */
      eig(KHAT2, 3, d2, v2);
      for (j=1;j<=3;j++) {
           temp[j]=v1[j][1]; v1[j][1]=v1[j][3]; v1[j][3]=temp[j];
      }
      for (j=1;j<=3;j++) {
           temp[j]=v2[j][1]; v2[j][1]=v2[j][3]; v2[j][3]=temp[j];
      }
      len1[1]= 1/sqrt(d1[3]); len1[2]= 1/sqrt(d1[2]); len1[3]= 1/sqrt(d1[1]);
      len2[1]= 1/sqrt(d2[3]); len2[2]= 1/sqrt(d2[2]); len2[3]= 1/sqrt(d2[1]);
      info(A, F1, KHAT1);
      info(B, F2, KHAT2);
      /* This minimization procedure finds the minimum distance from a given point
      on the surface of an ellipsoid to the surface of the other ellipsoid. Notice
      that the following procedure is independent of the positions of starting
      points: */
      minimize(state,2,dist,d_dist1,state);
      norm_angle(state,2);
      pos(state,r1,r2);
      /* Minimization of distance by Variable Metric Method w/two variables */
      /* Minimization Phase I: SHIFT1 is provided to perturbate a sequence
            of points computed by minimize() */
      i=1;
      do {
           for (j=1;j<=3;j++) {
             rold1[j]=r1[j];
             rold2[j]=r2[j];
           }
           state[3] += SHIFT1;
           state[4] += SHIFT1;
           minimize(state+2,2,dist,d_dist2,state);
           norm_angle(state+2,2);
           state[1] += SHIFT1;
           state[2] += SHIFT1;
           minimize(state,2,dist,d_dist1,state);
           norm_angle(state,2);
           pos(state,r1,r2);
           delt=max(dt(r1,rold1),dt(r2,rold2));
      } while ((delt > EP) && (i++ <= MAXSTEP));
      /* Minimization Phase II: SHIFT2 is provided at this step */
      if (delt > EP) {
           step1=1;
           for (; delt > EP && step1 < STEP1MAX ;){
             for (j=1;j<=3;j++) {
                  rold1[j]=r1[j];
                  rold2[j]=r2[j];
             }
             state[3] += SHIFT2;
             state[4] += SHIFT2;
             minimize(state+2,2,dist,d_dist2,state);
             norm_angle(state+2,2);
             state[1] += SHIFT2;
             state[2] += SHIFT2;
             minimize(state,2,dist,d_dist1,state);
             norm_angle(state,2);
             pos(state,r1,r2);
             delt=max(dt(r1,rold1),dt(r2,rold2));
             step1++;
           }
      }
      if(dt(r1,r2) < min(A[1],min(A[2],min(A[3],min(B[1],min(B[2],B[3])))))) {
           /* Minimizations by Variable Metric Method w/ four variables */
           minimize(state,4,dist,d_dist,state);
           norm_angle(state,4);
           pos(state,r1,r2);
           enorm(state,en1,en2);
           /* Check the contact occurs: */
           check=(r2[1]-r1[1])*en1[1]+(r2[2]-r1[2])*en1[2]+(r2[3]-r1[3])*en1[3];
           pt = dot(en1, en2, 3);
           if(check > 0. && pt<= -1+DEV) {
                FREE_MATRIX;
                return FALSE;   /* no real contact */
           } else {
                /* Minimization Phase III: EP1 which is smaller than EP to obtain the
                converged points with better accuracy*/
                step2=1;
                for (;delt > EP1 && step2 < STEP2MAX;) {
                     for (j=1;j<=3;j++) {
                          rold1[j]=r1[j];
                          rold2[j]=r2[j];
                     }
                     state[3] += SHIFT2;
                     state[4] += SHIFT2;
                     minimize(state+2,2,dist,d_dist2,state);
                     norm_angle(state+2,2);
                     state[1] += SHIFT2;
                     state[2] += SHIFT2;
                     minimize(state,2,dist,d_dist1,state);
                     norm_angle(state,2);
                     pos(state,r1,r2);
                     delt=max(dt(r1,rold1),dt(r2,rold2));
                     step2++;
                }
                minimize(state,4,dist,d_dist,state);
                norm_angle(state,4);
                pos(state,r1,r2);
                enorm(state,n1,en2);
                /* Check the contact occurs: */
                check=(r2[1]-r1[1])*n1[1]+(r2[2]-r1[2])*n1[2]+(r2[3]-r1[3])*n1[3];
                pt= DOT3(n1,en2);
                if(check > 0. && pt<= -1+DEV1) {
                     FREE_MATRIX;
                     return FALSE;   /* no real contact */
                } else {
                     /* Searching for the unique contact point*/
                     if (pert(state,1.e-7)) {   /* pert() returns TRUE or FALSE */
                          for (i=1;i<=4;i++) deep[i]=state[i];
                          pos(deep,r1,r2);
                          enorm(state,n1,en2);   /* for supergudratic model */
                          FREE_MATRIX;
                          return TRUE;   /* contact happens */
                     } else {
                          FREE_MATRIX;
                          return FALSE;
                     }
                } /* end perturbation procedure */
           } /* end Phase III */
      } else {
           FREE_MATRIX;
           return FALSE;   /* no real contact */
      }
 } else { /* end potential contact detect */
      FREE_MATRIX;
      return FALSE;   /* no potential contact */
 }
}

/****************************************************************************/
/*                               supplements                                */
/****************************************************************************/

/****************************************************************************/
/*    Compute the matrix KHAT=F^(-T)KF^(-1)                                 */
/****************************************************************************/
void info(Vector SA, Matrix F, Matrix KHAT)
{
 Matrix FINV, FT, K, C;

 FINV=matrix(3,3); FT=matrix(3,3); K=matrix(3,3); C=matrix(3,3);
 matrix_inverse(F, 3, FINV);
 matrix_transpose(FINV,FT,3,3);
 K[1][1]=1/(SA[1]*SA[1]); K[1][2]=0.; K[1][3]=0.;
 K[2][1]=0.; K[2][2]=1/(SA[2]*SA[2]); K[2][3]=0.;
 K[3][1]=0.; K[3][2]=0.; K[3][3]=1/(SA[3]*SA[3]);
 matrix_times_matrix(C,FT,K,3,3,3);
 matrix_times_matrix(KHAT,C,FINV,3,3,3); /* KHAT=F^(-T)KF^(-1) */
 free_matrix(C);
 free_matrix(FT);
 free_matrix(K);
 free_matrix(FINV);
}

/****************************************************************************/
/* Compute and sort the eigenvalues and eigenvectors                        */
/****************************************************************************/
void eig(Matrix a, int n, Vector d, Matrix v)
{
 int nrot;
 void jacobi(Matrix a, int n, Vector d, Matrix v, int *nrot);
 void eigsrt(Vector d, Matrix v, int n);

 jacobi(a, n, d, v, &nrot);
 eigsrt(d, v, n);
}

/****************************************************************************/
/* Compute the principal directions and principal values of the ellipsoids  */
/* in the current configuration                                             */
/****************************************************************************/
#define ROTATE(a,i,j,k,l) g=a[i][j]; h=a[k][l]; a[i][j]=g-s*(h+g*tau); \
a[k][l]=h+s*(g-h*tau);

void jacobi(Matrix a, int n, Vector d, Matrix v, int *nrot)
/* Compute all eigenvalues and eigenvectors of a real symmetric matrix
     a[1..n][1..n]. On output, the elements of above the diagonal are destroyed.
     d[1..n] returns the eigenvalues of a. v[1..n][1..n] is a matrix whose columns
     contain, on output, the normalized eigenvectors of a. nrot returns the number
     jacobi rotates that were required. See Numerical Recipes on C pp.467-468. */
{
 int j, iq, ip, i;
 double tresh, theta, tau, t, sm, s, h, g, c;
 Vector b, z;

 b=vector(n); z=vector(n);
 for(ip=1;ip<=n;ip++){
      for (iq=1;iq<=n;iq++) v[ip][iq]=0.0;
      v[ip][ip]=1.0;
 }
 for (ip=1;ip<=n;ip++){
      b[ip]=d[ip]=a[ip][ip];
      z[ip]=0.0;
 }
 *nrot=0;
 for (i=1;i<=50;i++) {
      sm=0.0;
      for (ip=1;ip<=n-1;ip++) for (iq=ip+1;iq<=n;iq++) sm += fabs(a[ip][iq]);
      if(sm==0.0) {
           free_vector(z);
           free_vector(b);
           return;
      }
      if (i<4) tresh=0.2*sm/(n*n);
      else tresh=0.0;
      for (ip=1;ip<=n-1;ip++) {
           for (iq=ip+1;iq<=n;iq++) {
             g=100.*fabs(a[ip][iq]);
#ifdef JACOBI_NR
             if (i>4 && (double)(fabs(d[ip])+g)==(double)fabs(d[ip])
                  && (double)(fabs(d[iq])+g) == (double)fabs(d[iq]))
#else
             if (i>4 && (double)(fabs(d[ip])+g)==(double)fabs(d[ip])
                  && (double)(fabs(d[iq])+g) == (double)fabs(d[ip]))
#endif
                 a[ip][iq]=0.0;
             else if (fabs(a[ip][iq])>tresh) {
                 h=d[iq]-d[ip];
                 if ((double)(fabs(h)+g)==(double)fabs(h)) t=(a[ip][iq])/h;
                 else {
                      theta=0.5*h/(a[ip][iq]);
                      t=1.0/(fabs(theta)+sqrt(1.0+theta*theta));
                      if (theta<0.0) t=-t;
                 }
                 c=1.0/sqrt(1+t*t);
                 s=t*c;
                 tau=s/(1.0+c);
                 h=t*a[ip][iq];
                 z[ip] -= h;
                 z[iq] += h;
                 d[ip] -= h;
                 d[iq] += h;
                 a[ip][iq]=0.0;
                 for (j=1;j<=ip-1;j++) {
                      ROTATE(a,j,ip,j,iq)
                 }
                 for (j=ip+1;j<=iq-1;j++) {
                      ROTATE(a,ip,j,j,iq)
                 }
                 for (j=iq+1;j<=n;j++) {
                      ROTATE(a,ip,j,iq,j)
                 }
                 for (j=1;j<=n;j++) {
                      ROTATE(v,j,ip,j,iq)
                 }
                 ++(*nrot);
             }
           }
      }
      for (ip=1;ip<=n;ip++){
           b[ip] += z[ip];
           d[ip]=b[ip];
           z[ip]=0.0;
      }
 }
 nrerror("Too many iterations in routine jacobi()");
}

/****************************************************************************/
/* Sorting the eigenvalues and eigenvectors                                 */
/****************************************************************************/
void eigsrt(Vector d, Matrix v, int n)
/* Given the eigenvalues d[1..n] and the eigenvector in matrix v[1..n][1..n]
  as the output from Jacobi, this routine sorts the eigenvalues into decending
  order, adn rearranges the eigenvectors correspondingly. See Numerical Recipes
  in C on p.468. */
{
 int k, j, i;
 double p;

 for (i=1;i<n;i++) {
      p=d[k=i];
      for (j=i+1;j<=n;j++) if (d[j] >= p) p=d[k=j];
      if (k != i) {
           d[k]=d[i];
           d[i]=p;
           for (j=1;j<=n;j++) {
             p=v[j][i];
             v[j][i]=v[j][k];
             v[j][k]=p;
           }
      }
 }
}

/****************************************************************************/
/* Compute the outward unit normal on the surface of the ellipsoids         */
/****************************************************************************/
void enorm(Vector x, Vector nvec1, Vector nvec2)
       /* x[1]=u1, x[2]=v1, x[3]=u2, x[4]=v2 */
{
 int i, j, k1, k2, s[5], c[5], k[5];
 double test1, test2, tang1[4], tang2[4], cp1[4], tang3[4], tang4[4], cp2[4];
 double norm1, norm2, L1[4], L2[4], L3[4], L4[4], temp[5]; /* L2, L4: were [3] */
 double s_x1,s_x2,c_x1,c_x2,s_x3,s_x4,c_x3,c_x4;
 double s_x1n,c_x1n,s_x2n,c_x2n,s_x3n,c_x3n,s_x4n,c_x4n;
 double s_x2p,c_x1p,c_x2p,s_x4p,c_x3p,c_x4p;

 for (i=1;i<=4;i++) temp[i]=x[i];
 for (i=1;i<=4;i++) {
      k[i]=(int)(x[i]/(2*Pi));
      if (x[i] >= 0) x[i]=x[i]-2*k[i]*Pi;
      else x[i]=x[i]-2*(k[i]-1)*Pi;
 }
 for (i=1;i<=4;i++) {
      if (x[i] >= 0 && x[i] <= Pi/2) {
           s[i]=1; c[i]=1;
      } else if (x[i]>Pi/2 && x[i]<=Pi) {
           x[i]=Pi-x[i]; s[i]=1; c[i]=-1;
      } else if (x[i]>Pi && x[i]<=3*Pi/2) {
           x[i]=x[i]-Pi; s[i]=-1; c[i]=-1;
      } else {
           x[i]=2*Pi-x[i]; s[i]=-1; c[i]=1;
      }
 }
 if (EXP==1) {
      s_x1n=c_x1n=s_x2n=c_x2n=s_x3n=c_x3n=c_x4n=s_x4n=1.0;
 } else {
      if (x[1]<1.e-16) s_x1n=1.e16;
      else s_x1n= pow(sin(x[1]),EXP-1);
      if (x[1] > (Pi/2-1.e-16)) c_x1n=1.e16;
      else c_x1n= pow(cos(x[1]),EXP-1);
      if (x[2]<1.e-16) s_x2n=1.e16;
      else s_x2n= pow(sin(x[2]),EXP-1);
      if (x[2] > (Pi/2-1.e-16)) c_x2n=1.e16;
      else c_x2n= pow(cos(x[2]),EXP-1);
      if (x[3]<1.e-16) s_x3n=1.e16;
      else s_x3n= pow(sin(x[3]),EXP-1);
      if (x[3] > (Pi/2-1.e-16)) c_x3n=1.e16;
      else c_x3n= pow(cos(x[3]),EXP-1);
      if (x[4]<1.e-16) s_x4n=1.e16;
      else s_x4n= pow(sin(x[4]),EXP-1);
      if (x[4] > (Pi/2-1.e-16)) c_x4n=1.e16;
      else c_x4n= pow(cos(x[4]),EXP-1);
 }
 s_x2p= s[2]*pow(sin(x[2]),EXP);
 c_x1p= c[1]*pow(cos(x[1]),EXP);
 c_x2p= c[2]*pow(cos(x[2]),EXP);
 s_x4p= s[4]*pow(sin(x[4]),EXP);
 c_x3p= c[3]*pow(cos(x[3]),EXP);
 c_x4p= c[4]*pow(cos(x[4]),EXP);
 s_x1= s[1]*sin(x[1]);
 s_x2= s[2]*sin(x[2]);
 c_x1= c[1]*cos(x[1]);
 c_x2= c[2]*cos(x[2]);
 s_x3= s[3]*sin(x[3]);
 s_x4= s[4]*sin(x[4]);
 c_x3= c[3]*cos(x[3]);
 c_x4= c[4]*cos(x[4]);
 L1[1]= -len1[1]*c_x1n*s_x1*c_x2p;
 L1[2]= -len1[2]*c_x1n*s_x1*s_x2p;
 L1[3]= len1[3]*s_x1n*c_x1;
 L2[1]= -len1[1]*c_x1p*s_x2*c_x2n;
 L2[2]= len1[2]*c_x1p*c_x2*s_x2n;
 L3[1]= -len2[1]*c_x3n*s_x3*c_x4p;
 L3[2]= -len2[2]*c_x3n*s_x3*s_x4p;
 L3[3]= len2[3]*s_x3n*c_x3;
 L4[1]= -len2[1]*c_x3p*s_x4*c_x4n;
 L4[2]= len2[2]*c_x3p*c_x4*s_x4n;
 L2[3]=L4[3]=0.;
 for (i=1;i<=3;i++) tang1[i]=tang2[i]=tang3[i]=tang4[i]=0.0;
 for (i=1;i<=3;i++) {
      for (j=1;j<=3;j++) {
           tang1[i] += EXP*L1[j]*v1[i][j];
           tang2[i] += EXP*L2[j]*v1[i][j];
           tang3[i] += EXP*L3[j]*v2[i][j];
           tang4[i] += EXP*L4[j]*v2[i][j];
      }
 }
 /* Cross product of the two tangent vectors: */
 cp1[1]=tang2[2]*tang1[3]-tang1[2]*tang2[3];
 cp1[2]=tang2[3]*tang1[1]-tang2[1]*tang1[3];
 cp1[3]=tang2[1]*tang1[2]-tang2[2]*tang1[1];
 cp2[1]=tang4[2]*tang3[3]-tang3[2]*tang4[3];
 cp2[2]=tang4[3]*tang3[1]-tang4[1]*tang3[3];
 cp2[3]=tang4[1]*tang3[2]-tang4[2]*tang3[1];
 /* Compute unit normal vectors */
 norm1=sqrt(square(cp1[1])+square(cp1[2])+square(cp1[3]));
 norm2=sqrt(square(cp2[1])+square(cp2[2])+square(cp2[3]));
 k1=(int)(temp[1]/(2*Pi));
 test1=fabs(temp[1]-2*k1*Pi);
 k2=(int)(temp[3]/(2*Pi));
 test2=fabs(temp[3]-2*k2*Pi);
 if (test1<=Pi/2 || test1>=3*Pi/2) for (i=1;i<=3;i++) nvec1[i]=cp1[i]/norm1;
 else for (i=1;i<=3;i++) nvec1[i]= -cp1[i]/norm1;
 if (test2<=Pi/2 || test2>=3*Pi/2) for (i=1;i<=3;i++) nvec2[i]= cp2[i]/norm2;
 else for (i=1;i<=3;i++) nvec2[i]= -cp2[i]/norm2;
 for (i=1;i<=4;i++) x[i]=temp[i];
}

void angle(Vector x, int s[], int c[])
{
 int i, k[5];

 for (i=1;i<=4;i++) {
      k[i]=(int)(x[i]/(2*Pi));
      if (x[i] >= 0) x[i]=x[i]-2*k[i]*Pi;
      else x[i]=x[i]-2*(k[i]-1)*Pi;
      if (x[i] >= 0 && x[i] <= Pi/2) {
          s[i]=1; c[i]=1;
      } else if (x[i]>Pi/2 && x[i]<=Pi) {
          x[i]=Pi-x[i]; s[i]=1; c[i]=-1;
      } else if (x[i]>Pi && x[i]<=3*Pi/2) {
          x[i]=x[i]-Pi; s[i]=-1; c[i]=-1;
      } else {
          x[i]=2*Pi-x[i]; s[i]=-1; c[i]=1;
      }
 }
}

/****************************************************************************/
/*    Angle normalization                                                   */
/****************************************************************************/
void norm_angle(Vector x, int n)
       /* normalize the state vector to [0, 2*Pi] */
{
 int i, k[5];

 for (i=1;i<=n;i++) {
      k[i]=(int)(x[i]/(2*Pi));
      if (x[i] >= 0.0) x[i]=x[i]-2*k[i]*Pi;
      else x[i]=x[i]-2*(k[i]-1)*Pi;
 }
}

/****************************************************************************/
/*    Compute the position vectors of the contact points                    */
/****************************************************************************/
void pos(Vector x, Vector r1, Vector r2)
       /* x={u1,v1,u2,v2}, ri is the position vector on the surface of body i */
{
 int i, j;
 int s[5],c[5];
 double L1[4], L2[4], temp[5];
 double s_x1, c_x12, c_x34, s_x3, cs_x12, cs_x34, c_x1, c_x3;
 void angle(Vector, int s[], int c[]);

 for (i=1;i<=4;i++) temp[i]=x[i];
 angle(x,s,c);
 s_x1= s[1]*pow(sin(x[1]),EXP);
 s_x3= s[3]*pow(sin(x[3]),EXP);
 c_x1= c[1]*pow(cos(x[1]),EXP);
 c_x3= c[3]*pow(cos(x[3]),EXP);
 c_x12= c_x1*c[2]*pow(cos(x[2]),EXP);
 c_x34= c_x3*c[4]*pow(cos(x[4]),EXP);
 cs_x12= c_x1*s[2]*pow(sin(x[2]),EXP);
 cs_x34= c_x3*s[4]*pow(sin(x[4]),EXP);
 L1[1]=len1[1]*c_x12; L1[2]=len1[2]*cs_x12; L1[3]=len1[3]*s_x1;
 L2[1]=len2[1]*c_x34; L2[2]=len2[2]*cs_x34; L2[3]=len2[3]*s_x3;
 for (i=1;i<=3;i++) r1[i]=r2[i]=0.0;
 for (i=1;i<=3;i++) {
      for (j=1;j<=3;j++) {
           r1[i] += L1[j]*v1[i][j];
           r2[i] += L2[j]*v2[i][j];
      }
      r2[i] += xbar[i];
 }
 for (i=1;i<=4;i++) x[i]=temp[i];
}

/****************************************************************************/
/* Calculate the distance S(u1,v1,u2,v2) at x[1..4]:                        */
/* x[1]=u1, x[2]=v1, x[3]=u2, x[4]=v2                                       */
/****************************************************************************/
double dist(Vector x)
{
 int i, s[5],c[5];
 double dummy=0.0, st[5], ct[5], t[5];   /* substitution variables */
 void angle(Vector, int s[], int c[]);

 for (i=1;i<=4;i++) t[i]=x[i];
 angle(t,s,c);                        /* note: angle() modifies t! */
 for (i=1;i<=4;i++) {
      ct[i]=c[i]*pow(cos(t[i]),EXP);
      st[i]=s[i]*pow(sin(t[i]),EXP);
 }
 for (i=1;i<=3;i++){
      dummy += square(-xbar[i]+v1[i][1]*ct[1]*ct[2]*len1[1]-
                 v2[i][1]*ct[3]*ct[4]*len2[1]+v1[i][3]*len1[3]*st[1]+
                 v1[i][2]*ct[1]*len1[2]*st[2]-v2[i][3]*len2[3]*st[3]-
                 v2[i][2]*ct[3]*len2[2]*st[4]);
 }
 return sqrt(dummy);
}

/****************************************************************************/
/* Calculate the gradient g=(dS/du1,dS/dv1) at the point p[1,2]=(u1,v1)     */
/* given q[1,2]=(u2,v2).                                                    */
/****************************************************************************/
void d_dist1(Vector g, Vector x)
{
 int i, s[5], c[5];
 double st[5], ct[5], t[5], sine[5], cose[5];
 double cn1, cn2, sn1, sn2;
 double m, ds=0.0, sqds, dummy1=0.0, dummy2=0.0;
 void angle(Vector, int s[], int c[]);

 for (i=1;i<=4;i++) t[i]=x[i];
 angle(t,s,c);                      /* note: angle() modifies t! */
 for (i=1;i<=4;i++) {
      sine[i]=sin(t[i]);
      cose[i]=cos(t[i]);
      ct[i]=c[i]*pow(cose[i],EXP);
      st[i]=s[i]*pow(sine[i],EXP);
 }
 if (EXP==1) {
      cn1=cn2=sn1=sn2=1.0;
 } else {
      if (t[1] > (Pi/2-1.e-14)) cn1=1.e14;
      else cn1=pow(cose[1],EXP-1);
      if (t[2] > (Pi/2-1.e-14)) cn2=1.e14;
      else cn2=pow(cose[2],EXP-1);
      if (t[1]<1.e-14) sn1=1.e14;
      else sn1=pow(sine[1],EXP-1);
      if (t[2]<1.e-14) sn2=1.e14;
      else sn2=pow(sine[2],EXP-1);
 }
 for (i=1;i<=3;i++) {
      m= -xbar[i]+v1[i][1]*ct[1]*ct[2]*len1[1]-
          v2[i][1]*ct[3]*ct[4]*len2[1]+v1[i][3]*len1[3]*st[1]+
          v1[i][2]*ct[1]*len1[2]*st[2]-v2[i][3]*len2[3]*st[3]-
          v2[i][2]*ct[3]*len2[2]*st[4];
      ds += square(m);
      dummy1+= (-v1[i][1]*cn1*len1[1]*s[1]*sine[1]*ct[2]-
                v1[i][2]*cn1*len1[2]*s[1]*sine[1]*st[2]+
                v1[i][3]*sn1*len1[3]*c[1]*cose[1])*EXP*m;
      dummy2+= (-v1[i][1]*ct[1]*cn2*len1[1]*s[2]*sine[2]+
                v1[i][2]*ct[1]*sn2*len1[2]*c[2]*cose[2])*EXP*m;
 }
 /* dS/su1=(1/2S)*dS^2/du1, since there is a 2 in dummy, so dummy is divided by
 S only. */
 sqds=sqrt(ds);
 g[1]= dummy1/sqds;
 g[2]= dummy2/sqds;
}

/****************************************************************************/
/* Calculate the gradient g=(dS/du2, dS/dv2) at the point p[1,2]=(u2,v2)    */
/* given q[1,2]=(u1,v1).                                                    */
/****************************************************************************/
void d_dist2(Vector g, Vector x)
{
 int i, s[5], c[5];
 double st[5], ct[5], t[5], sine[5], cose[5];
 double cn3, cn4, sn3, sn4;
 double m, ds=0.0, sqds, dummy3=0.0, dummy4=0.0;
 void angle(Vector, int s[], int c[]);

 for (i=1;i<=4;i++) t[i]=x[i];
 angle(t,s,c);                      /* note: angle() modifies t! */
 for (i=1;i<=4;i++) {
      sine[i]=sin(t[i]);
      cose[i]=cos(t[i]);
      ct[i]=c[i]*pow(cose[i],EXP);
      st[i]=s[i]*pow(sine[i],EXP);
 }
 if (EXP==1) {
      cn3=cn4=sn3=sn4=1.0;
 } else {
      if (t[3] > (Pi/2-1.e-14)) cn3=1.e14;
      else cn3=pow(cose[3],EXP-1);
      if (t[4] > (Pi/2-1.e-14)) cn4=1.e14;
      else cn4=pow(cose[4],EXP-1);
      if (t[3]<1.e-14) sn3=1.e14;
      else sn3=pow(sine[3],EXP-1);
      if (t[4]<1.e-14) sn4=1.e14;
      else sn4=pow(sine[4],EXP-1);
 }
 for (i=1;i<=3;i++) {
      m= -xbar[i]+v1[i][1]*ct[1]*ct[2]*len1[1]-
           v2[i][1]*ct[3]*ct[4]*len2[1]+v1[i][3]*len1[3]*st[1]+
           v1[i][2]*ct[1]*len1[2]*st[2]-v2[i][3]*len2[3]*st[3]-
           v2[i][2]*ct[3]*len2[2]*st[4];
      ds += square(m);
      dummy3 += (v2[i][1]*cn3*len2[1]*s[3]*sine[3]*ct[4]+
                 v2[i][2]*cn3*len2[2]*s[3]*sine[3]*st[4]-
                 v2[i][3]*sn3*len2[3]*c[3]*cose[3])*EXP*m;
      dummy4 += (v2[i][1]*ct[3]*cn4*len2[1]*s[4]*sine[4]-
                 v2[i][2]*ct[3]*sn4*len2[2]*c[4]*cose[4])*EXP*m;
 }
 sqds=sqrt(ds);
 g[1]= dummy3/sqds;
 g[2]= dummy4/sqds;
}

/****************************************************************************/
/* Calculate the gradient g=(dS/du1, dS/dv1, dS/du2, dS/dv2) at             */
/* x[1..4] = (u1, v1, u2, v2)                                               */
/****************************************************************************/
void d_dist(Vector q, Vector x)
{
 int i, s[5], c[5];
 double st[5], ct[5], t[5], sine[5], cose[5];
 double sn[5], cn[5];
 double m, ds=0.0, sqds, dummy[5]={0.0, 0.0, 0.0, 0.0, 0.0};
 void angle(Vector, int s[], int c[]);

 for (i=1;i<=4;i++) t[i]=x[i];
 angle(t,s,c);                      /* note: angle() modifies t! */
 for (i=1;i<=4;i++) {
      sine[i]=sin(t[i]);
      cose[i]=cos(t[i]);
      ct[i]=c[i]*pow(cose[i],EXP);
      st[i]=s[i]*pow(sine[i],EXP);
 }
 if (EXP==1) {
      for (i=1;i<=4;i++) cn[i]=sn[i]=1.0;
 } else {
      if (t[1] > (Pi/2-1.e-14)) cn[1]=1.e14;
      else cn[1]=pow(cos(t[1]),EXP-1);
      if (t[2] > (Pi/2-1.e-14)) cn[2]=1.e14;
      else cn[2]=pow(cos(t[2]),EXP-1);
      if (t[1]<1.e-14) sn[1]=1.e14;
      else sn[1]=pow(sin(t[1]),EXP-1);
      if (t[2]<1.e-14) sn[2]=1.e14;
      else sn[2]=pow(sin(t[2]),EXP-1);
      if (t[3] > (Pi/2-1.e-14)) cn[3]=1.e14;
      else cn[3]=pow(cos(t[3]),EXP-1);
      if (t[4] > (Pi/2-1.e-14)) cn[4]=1.e14;
      else cn[4]=pow(cos(t[4]),EXP-1);
      if (t[3]<1.e-14) sn[3]=1.e14;
      else sn[3]=pow(sin(t[3]),EXP-1);
      if (t[4]<1.e-14) sn[4]=1.e14;
      else sn[4]=pow(sin(t[4]),EXP-1);
 }
 for (i=1;i<=3;i++) {
      m= -xbar[i]+v1[i][1]*ct[1]*ct[2]*len1[1]-
           v2[i][1]*ct[3]*ct[4]*len2[1]+v1[i][3]*len1[3]*st[1]+
           v1[i][2]*ct[1]*len1[2]*st[2]-v2[i][3]*len2[3]*st[3]-
           v2[i][2]*ct[3]*len2[2]*st[4];
      ds += square(m);
      dummy[1] += (-v1[i][1]*cn[1]*len1[1]*s[1]*sine[1]*ct[2]-
                   v1[i][2]*cn[1]*len1[2]*s[1]*sine[1]*st[2]+
                   v1[i][3]*sn[1]*len1[3]*c[1]*cose[1])*EXP*m;
      dummy[2] += (-v1[i][1]*ct[1]*cn[2]*len1[1]*s[2]*sine[2]+
                   v1[i][2]*ct[1]*sn[2]*len1[2]*c[2]*cose[2])*EXP*m;
      dummy[3] += (v2[i][1]*cn[3]*len2[1]*s[3]*sine[3]*ct[4]+
                   v2[i][2]*cn[3]*len2[2]*s[3]*sine[3]*st[4]-
                   v2[i][3]*sn[3]*len2[3]*c[3]*cose[3])*EXP*m;
      dummy[4] += (v2[i][1]*ct[3]*cn[4]*len2[1]*s[4]*sine[4]-
                   v2[i][2]*ct[3]*sn[4]*len2[2]*c[4]*cose[4])*EXP*m;
 }
 sqds=sqrt(ds);
 for (i=1;i<=4;i++) q[i]=dummy[i]/sqds;
}

/****************************************************************************/
/*                     Unique Contact Point Detection                       */
/****************************************************************************/
/* Input a[1..4] is the vector from detect_contact and a[1..4] is also the  */
/* output vector as which corresponds to unique contact points on both bodies.*/
/****************************************************************************/
#define EPS1 1.e-15
#define EPS2 1.e-15
#define NT 32
#define FAC1 0.7
#define FAC2 2
#define MAX 300

int pert(Vector a, double SHIFT)
{
 int i,j,lp1,lp2;
 double func(Vector, Vector, Vector, Matrix);
 void pos(Vector state, Vector r1, Vector r2);
 void piksrt(int, int , Vector a, Matrix atri);
 void opp(Vector a, Vector b);
 void search(Vector, Vector, double, double, double);
 double diff1, diff2, fc1, fc2, val, va2;
 double ftemp1, ftemp2;
 double r1[4], r2[4], b[5], c[5], fa[NT+1], fb[NT+1];
 Matrix atri=matrix(NT,4);
 Matrix btri=matrix(5,4);

 fb[5]=1.0; fa[5]=1.0; val= 1.0; va2= 1.0;
 for (;fb[5]>0.0 || fa[5]>0.0 ;) {
      for (i=1;i<=NT;i++) {                 /* perturbation along NT directions */
          atri[i][1]=a[1]+cos((i-1)*2*Pi/NT)*SHIFT;   /* SHIFT : radian */
          atri[i][2]=a[2]+sin((i-1)*2*Pi/NT)*SHIFT;
          atri[i][3]=a[3]+cos((i-1)*2*Pi/NT)*SHIFT;
          atri[i][4]=a[4]+sin((i-1)*2*Pi/NT)*SHIFT;
          for (j=1;j<=4;j++) b[j]=atri[i][j];
          pos(b,r1,r2); fb[i]=func(r1,xbar,len2,v2); fa[i]=func(r2,null,len1,v1);
      }
      /* Sorting (atri[i][1],atri[i][2]) which are on the body 1 by index fb[1..n]*/
      /* Sorting (atri[i][3],atri[i][4]) which are on the body 2 by index fa[1..n]*/
      piksrt(1,NT,fb,atri);
      piksrt(3,NT,fa,atri);
      if (fb[5]>0.0 || fa[5]>0.0 ) {
          if (fa[1] > val || fb[1] > va2) SHIFT *= FAC1;
          else SHIFT *= FAC2;
          if (SHIFT > 0.1) {
            free_matrix(atri); free_matrix(btri);
            return FALSE;
          }
          if (SHIFT < 1.e-9) {
            free_matrix(atri); free_matrix(btri);
            return FALSE;
          }
          val=fa[1]; va2=fb[1];
      }
 }
 /* perturbating along the five directions with smallest function values on
      body 1 & 2 */
 for (j=1;j<=5;j++){
      for (i=1;i<=4;i++) b[i]=atri[j][i];
      opp(a,b);
      for (i=1;i<=4;i++) btri[j][i]=b[i];
      /* btri[][] are the oppsite points to a[], the start points. */
 }
 free_matrix(atri);
 /* Take five middle points on body 1 & 2 */
 for (j=1;j<=5;j++){
      for (i=1;i<=4;i++) btri[j][i]=(a[i]+btri[j][i])/2;
      /* btri[][] are the middle points now. */
      for (i=1;i<=4;i++) b[i]=btri[j][i];
      pos(b,r1,r2); fb[j]=func(r1,xbar,len2,v2); fa[j]=func(r2,null,len1,v1);
 }
 piksrt(1,5,fb,btri);
 piksrt(3,5,fa,btri);
 /* Using the smallest three middle points to perturbate along a c! */
 for (j=1;j<=3;j++){
      for (i=1;i<=4;i++) c[i]= btri[j][i];
      fc1= fb[j]; fc2= fa[j];
      search(a,c,fc1,fc2,EPS2);
      for (i=1;i<=4;i++) btri[j][i]= c[i];
      /* btri[][] are the points with smallest function value along curves formed
            by start point and middle points. */
 }
 /* Perturbate along the previous three points */
 for (i=1;i<=4;i++) b[i]=btri[1][i]+0.01*(btri[2][i]-btri[1][i]);
 pos(b,r1,r2); ftemp1=func(r1,xbar,len2,v2); ftemp2=func(r2,null,len1,v1);
 if (ftemp1 < fb[1]) for (i=1;i<=2;i++) c[i]=(btri[1][i]+btri[2][i])/2;
 else for (i=1;i<=2;i++) c[i]=(btri[1][i]+btri[3][i])/2;
 if (ftemp2 < fa[1]) for (i=3;i<=4;i++) c[i]=(btri[1][i]+btri[2][i])/2;
 else for (i=3;i<=4;i++) c[i]=(btri[1][i]+btri[3][i])/2;
 pos(c,r1,r2); fc1=func(r1,xbar,len2,v2); fc2=func(r2,null,len1,v1);
 diff1=fabs(fabs(fb[1])-fabs(fc1));
 for (i=1;i<=4;i++) b[i]=btri[1][i];
 /* Loop to search for the direction corresponding to the min function value */
 /* points on body 1 */
 lp1=1;
 for (;diff1 > EPS1 && lp1 < MAX;){
      if (fb[1]<fc1) {
           /* update vector c */
           for (i=1;i<=2;i++) c[i]=(c[i]+b[i])/2;
           pos(c,r1,r2); fc1=func(r1,xbar,len2,v2);
      } else {
           /* update vector b */
           for (i=1;i<=2;i++) b[i]=(c[i]+b[i])/2;
           pos(b,r1,r2); fb[1]=func(r1,xbar,len2,v2);
      }
      diff1=fabs(fabs(fb[1])-fabs(fc1));
      lp1++;
 }
 /* points on body 2 */
 diff2=fabs(fabs(fa[1])-fabs(fc2));
 lp2=1;
 for (;diff2 > EPS1 && lp2 < MAX;) {
      if (fa[1]<fc2) {
           /* update vector c */
           for (i=3;i<=4;i++) c[i]=(c[i]+b[i])/2;
           pos(c,r1,r2); fc2=func(r2,null,len1,v1);
      } else {
           /* update vector b */
           for (i=3;i<=4;i++) b[i]=(c[i]+b[i])/2;
           pos(b,r1,r2); fa[1]=func(r2,null,len1,v1);
      }
      diff2=fabs(fabs(fa[1])-fabs(fc2));
      lp2++;
 }
 /* Final perturbation along the a_c direction */
 search(a,c,fc1,fc2,EPS2);
 free_matrix(btri);
 return TRUE;
}

/****************************************************************************/
/*    Find the corresponding function value of the point x in the current   */
/*    configuration.                                                        */
/* x-xbar=F(X-XBAR) Inputs are x:current position,                          */
/* z=xbar: current mass center, and F: deormation gradient.                 */
/* Ellipsoidal function(reference): (X-Xbar).K(X-Xbar)=1.                   */
/* Ellipsoidal function(current): (x-xbar).F^(-T)KF^(-1)(x-xbar)=1.         */
/* K=diag(1/A^2,1/B^2,1/C^2).                                               */
/****************************************************************************/
double func(Vector x, Vector z, Vector L, Matrix v)
{
 int i,j;
 double y[4], proj[4], p[4], dummy, inx;
 double dot(Vector, Vector, int);

 for (i=1;i<=3;i++) {
      for (j=1;j<=3;j++) {
          p[j]=v[j][i];
          y[j] = x[j] - z[j];
      }
      proj[i] = fabs(dot(y,p,3));
 }
 dummy=0.0;
 inx= 2./EXP;
 for (i=1;i<=3;i++) {
      dummy+= pow((proj[i]/L[i]),inx);
 }
 return dummy-1;
}

void piksrt(int k, int n, double arr[], Matrix brr)
/*Sorting an array[1..n] into ascending numerical order, by
straight insertion, while making the corresponding rearrangement
of the Matrix brr.*/
{
 int i,j;
 double a,b,c;

 for (j=2;j<=n;j++) {
     a=arr[j];
     b=brr[j][k];
     c=brr[j][k+1];
     i=j-1;
     while (i>0 && arr[i] > a){
          arr[i+1]=arr[i];
          brr[i+1][k]=brr[i][k];
          brr[i+1][k+1]=brr[i][k+1];
          i--;                                          /* restored */
     }
     arr[i+1]=a;
     brr[i+1][k]=b;
     brr[i+1][k+1]=c;
 }
}

/****************************************************************************/
/* Find the oppsite points on the intersection curve                        */
/****************************************************************************/
/* Input:(a[1],a[2]): original point on body 1 */
/*       (a[3],a[4]): original point on body 2 */
/* Input:(b[1],b[2]): perturbation point on body 1 */
/*       (b[3],b[4]): perturbation point on body 2 */
/* output:(b[1],b[2]): the opposite point on body 1 */
/*        (b[3],b[4]): the opposite point on body 2 */
#define FVMIN 1.e-15
#define ITERMAX 200

void opp(Vector a, Vector b)
{
 double func(Vector , Vector , Vector , Matrix);
 void pos(Vector state, Vector r1, Vector r2);
 int i, ite1,ite2;
 double sht[5], r1[4], r2[4], shtmin[3], ENLARGE[3], fv1, fv2;

 for (i=1;i<=4;i++) sht[i]=b[i]-a[i];
 shtmin[1]=min(sht[1],sht[2]);
 shtmin[2]=min(sht[3],sht[4]);
 for (i=1;i<=2;i++) {
     if (fabs(shtmin[i])<1.e-7) ENLARGE[i]=1.e7;
     else ENLARGE[i]=fabs(1/(shtmin[i]));
 }
 for (i=1;i<=2;i++) b[i]=a[i]+ENLARGE[1]*sht[i];
 for (i=3;i<=4;i++) b[i]=a[i]+ENLARGE[2]*sht[i];
 pos(b,r1,r2); fv1=func(r1,xbar,len2,v2); fv2=func(r2,null,len1,v1);
 for (;fv1<0.;) {
      ENLARGE[1] *= 2;
      for (i=1;i<=2;i++) b[i]=a[i]+ENLARGE[1]*sht[i];
      pos(b,r1,r2); fv1=func(r1,xbar,len2,v2);
 }
 for (;fv2<0.;) {
      ENLARGE[2] *= 2;
      for (i=3;i<=4;i++) b[i]=a[i]+ENLARGE[2]*sht[i];
      pos(b,r1,r2); fv2=func(r2,null,len1,v1);
 }
 ite1=1;
 for (;(fabs(fv1))> FVMIN && ite1 < ITERMAX;){
      ENLARGE[1]=ENLARGE[1]/2;
      if (fv1>0){
           for (i=1;i<=2;i++) b[i] -= ENLARGE[1]*sht[i];
      } else {                                          /* restored */
           for (i=1;i<=2;i++) b[i] += ENLARGE[1]*sht[i];
      }
      pos(b,r1,r2); fv1=func(r1,xbar,len2,v2);
      ite1++;
 }
 ite2=1;
 for (;(fabs(fv2))> FVMIN && ite2 < ITERMAX;){
      ENLARGE[2]=ENLARGE[2]/2;
      if (fv2>0){
           for (i=3;i<=4;i++) b[i] -= ENLARGE[2]*sht[i];
      } else {
           for (i=3;i<=4;i++) b[i] += ENLARGE[2]*sht[i];
      }
      pos(b,r1,r2); fv2=func(r2,null,len1,v1);
      ite2++;
 }
}

/****************************************************************************/
/* Searching along the current and starting points located on the surface of */
/* the ellipsoid                                                            */
/****************************************************************************/
void search(Vector a, Vector c, double fc1, double fc2, double g)
{
 int i,lp1,lp2;
 double r1[4], r2[4], anew[5], fanew1, fanew2, fbnew1, fbnew2, factor;
 double func(Vector , Vector , Vector, Matrix);
 void pos(Vector state, Vector r1, Vector r2);

 factor= 0.1;
 for (i=1;i<=4;i++) anew[i]=c[i]+1.e-12*(c[i]-a[i]);
 pos(anew,r1,r2); fanew1=func(r1,xbar,len2,v2); fanew2=func(r2,null,len1,v1);
 for (i=1;i<=4;i++) anew[i]=c[i]-1.e-12*(c[i]-a[i]);
 pos(anew,r1,r2); fbnew1=func(r1,xbar,len2,v2); fbnew2=func(r2,null,len1,v1);
 if (fc1<fanew1 && fc1<fbnew1){
      a[1]=c[1]; a[2]=c[2];   /* The final point on body 1 */
 } else if (fanew1<fc1){
      for (i=1;i<=2;i++) anew[i]=c[i]+factor*(c[i]-a[i]);
      pos(anew,r1,r2); fanew1=func(r1,xbar,len2,v2);
      lp1=1;
      for (;fabs(fanew1-fc1)> g && lp1 < MAX;){
           if (fanew1<fc1){
             c[1]=anew[1]; c[2]=anew[2]; fc1=fanew1;
           } else factor=factor/2;
           for (i=1;i<=2;i++) anew[i]=c[i]+factor*(c[i]-a[i]);
           pos(anew,r1,r2); fanew1=func(r1,xbar,len2,v2);
           lp1++;
      } /* end of for loop */
      a[1]=c[1]; a[2]=c[2];   /* The final point on body 1 */
 } else {
      for (i=1;i<=2;i++) anew[i]=c[i]-factor*(c[i]-a[i]);
      pos(anew,r1,r2); fanew1=func(r1,xbar,len2,v2);
      lp1=1;
      for (;fabs(fanew1-fc1)> g && lp1 < MAX;){
           if (fanew1<fc1){
             c[1]=anew[1]; c[2]=anew[2]; fc1=fanew1;
           } else factor=factor/2;
           for (i=1;i<=2;i++) anew[i]=c[i]-factor*(c[i]-a[i]);
           pos(anew,r1,r2); fanew1=func(r1,xbar,len2,v2);
           lp1++;
      } /* end of for loop */
      a[1]=c[1]; a[2]=c[2];   /* The final point on body 1 */
 }
 factor= 0.1;
 if (fc2<fanew2 && fc2<fbnew2){
      a[3]=c[3]; a[4]=c[4];   /* The final point on body 2 */
 } else if (fanew2<fc2) {
      for (i=3;i<=4;i++) anew[i]=c[i]+factor*(c[i]-a[i]);
      pos(anew,r1,r2); fanew2=func(r2,null,len1,v1);
      lp2=1;
      for (;fabs(fanew2-fc2)> g && lp2 < MAX;){
           if (fanew2<fc2) {
             c[3]=anew[3]; c[4]=anew[4]; fc2=fanew2;
           } else factor=factor/2;
           for (i=3;i<=4;i++) anew[i]=c[i]+factor*(c[i]-a[i]);
           pos(anew,r1,r2); fanew2=func(r2,null,len1,v1);
           lp2++;
      } /* end of for loop */
      a[3]=c[3]; a[4]=c[4];   /* The final point on body 2 */
 } else {
      for (i=3;i<=4;i++) anew[i]=c[i]-factor*(c[i]-a[i]);
      pos(anew,r1,r2); fanew2=func(r2,null,len1,v1);
      lp2=1;
      for (;fabs(fanew2-fc2)> g && lp2 < MAX;) {
           if (fanew2<fc2) {
             c[3]=anew[3]; c[4]=anew[4]; fc2=fanew2;
           } else factor=factor/2;
           for (i=3;i<=4;i++) anew[i]=c[i]-factor*(c[i]-a[i]);
           pos(anew,r1,r2); fanew2=func(r2,null,len1,v1);
           lp2++;
      } /* end of for loop */
      a[3]=c[3]; a[4]=c[4];   /* The final point on body 2 */
 }
}
