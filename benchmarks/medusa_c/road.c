/****************************************************************************/
/*                                  road.c                                  */
/* created by Gwo-Jeng Lo and Peter Varadi, modified June 30, 1999, 290 lines */
/* The functions in this file compute the road surface.                     */
/****************************************************************************/
/* Functions:                                                               */
/* - road()                   line 27                                       */
/* - range_error()            line 245                                      */
/* - dist_road()              line 255                                      */
/* - d_road()                 line 271                                      */
/****************************************************************************/
/* Transcribed from the MEDUSA report (UCB-ITS-PRR-99-32), Appendix F, for   */
/* benchmarking only; see README.md for what was repaired.                  */
#include <stdlib.h>
#include <stdio.h>
#include <math.h>
#include "common.h"
#include <string.h>

extern simu_struct simulation;

/****************************************************************************/
/*                          Orientation of the road                         */
/****************************************************************************/
void road(Vector normal, Vector tangent, Vector tp, vehicle_struct *v)
/* Calculates the road tangent and the road normal at the tracking point tp of
    the road spline. The input is the vehicle structure *v. */
{
 int NP=simulation.road.nodal_points;
 Matrix XIN=simulation.road.XIN;
 Matrix *C=simulation.road.C;
 Vector r=v->z;
 int i, j, k=v->road.segment, vn=v->ident;
 double s=v->road.parameter;
 int node=FALSE;   /* Flag indicates if the vehicle is very close to a node. */
 double rad1, rad2, rad3, rad4, pro, angle;
 Matrix cen=matrix(5,3); /* coordinates of the centers of the spheres */
 double tan[4], q[4], si[14];
 double s_a, c_a, s_t, c_t, s_b, alpha, dist_23, c_s,s_s;
 double dummy;
 double dist_road(Vector);
 void d_road(Vector, Vector);
 void range_error(int, int);

 /**** Determine in which road segment k the vehicle is ****/
 /* From the previous segment number, say seg=P, we consider only nodes P-1,
 P, P+1 and P+2 since the position of vehicle assumed could only locate in
 current or neighboring segments for the next time step. Each of these four
 nodes is the center of a sphere. The radius of sphere P-1 is the distance
 between the nodes P-1 & P. The radius of sphere P+2 is the distance between
 the nodes P+1 & P+2. The radius of sphere P is the smaller of the two
 distances between the nodes P-1 & P and P & P+1, respectively. And similarly
 for the P+1 sphere. If the P and P+1 spheres don't overlap, we add a fifth
 sphere in between. */

 /****************************************/
 /* Is vehicle in the first segment (a virtual one)? */
 /****************************************/
 if (k==1){
     for (i=1;i<=3;i++) cen[3][i]=XIN[k+1][i];
     pro=projection(C,cen[3],r,2);
     if (fabs(pro)<1.e-12) {
          node=TRUE;
          s=0.0;
     } else if (pro > 0.){
          for (i=1;i<=3;i++) cen[1][i]=XIN[k][i];
          if (dt(r,cen[1])> dt(cen[1],cen[3])) {
           /* real segment number is one less than the modified segment number */
           printf("\nVehicle %d moves forward to segment %d.\n",vn,k);
           k++;
           s=0.0;
          } else s=1.0; /* k+=0; */
     } else s=1.0; /* k+=0; */
 /****************************************/
 /* Is vehicle on the road defined by the user? */
 /****************************************/
 } else {
     /* Define four spheres: */
     for (i=1;i<=3;i++) for (j=1;j<=4;j++) cen[j][i]=XIN[k-2+j][i];
     rad1= dt(cen[1],cen[2]);
     rad2= min(rad1,dist_23=dt(cen[2],cen[3]));
     rad3= min(dist_23,rad4=dt(cen[3],cen[4]));
     /****************************************/
     /* Is vehicle inside the first sphere? */
     /****************************************/
     if (dt(r,cen[1]) <= rad1) {
          k--;
          printf("\nVehicle %d moves backward to segment %d.\n",vn,k-1);
          if (k>4) s=1.0;
     /****************************************/
     /* Is vehicle inside the fourth sphere and outside the second sphere? */
     /****************************************/
     } else if (dt(r,cen[4]) <= rad4 && dt(r,cen[2])>dist_23 ) {
          printf("\nVehicle %d moves forward to segment %d.\n",vn,k);
          k++;
          if (k>4) s=0.0;
     /****************************************/
     /* If we have four spheres: */
     /****************************************/
     } else if (!(dist_23>sqrt(rad2*rad2-LANEWIDTH*LANEWIDTH)+
          sqrt(rad3*rad3-LANEWIDTH*LANEWIDTH)) | (min(rad2,rad3)<dist_23)) {
          /****************************************/
          /* Is vehicle in the region close to the nodal point k? */
          /****************************************/
          if (dt(r,cen[2]) <= rad2 && dt(r,cen[3]) > rad3) {
           pro=projection(C,cen[2],r,k);
           /* Check if the tracking point is right on the nodal point k: */
           if (fabs(pro)<1.e-12) {
                node=TRUE;
                s=0.0;
           } else if (pro < 0.) {
                k--;
                printf("\nVehicle %d moves backward to segment %d.\n",vn,k-1);
                if (k>4) s=1.0;
           } /* else k+=0; */
          /****************************************/
          /* Is vehicle in the region close to the nodal point k+1? */
          /****************************************/
          } else if (dt(r,cen[3]) <= rad3 && dt(r,cen[4]) > rad4) {
           pro=projection(C,cen[3],r,k+1);
           /* Check if the tracking point is right on the nodal point k+1: */
           if (fabs(pro)<1.e-12) {
                node=TRUE;
                s=1.0;
           } else if (pro>0.0 && dt(r,cen[2])> dist_23){
                printf("\nVehicle %d moves forward to segment %d.\n",vn,k);
                k++;
                if(k>4) s=0.0;
           } /* else k+=0; */
          /****************************************/
          /* If vehicle isn't in the region of segment k, print error message */
          /****************************************/
          } else if (!(dt(r,cen[2]) <= rad2 && dt(r,cen[3]) <= rad3 ))
              range_error(1,vn);
     /****************************************/
     /* If we need a fifth sphere: */
     /****************************************/
     } else {
          for (i=1;i<=3;i++) cen[5][i]=(XIN[k][i]+XIN[k+1][i])/2;
          if (dt(r,cen[5]) > dt(cen[2],cen[3])/2) {
           /****************************************/
           /* Is vehicle in the region close to the nodal point k? */
           /****************************************/
           if (dt(r,cen[2]) <= rad2) {
                pro=projection(C,cen[2],r,k);
                /* Check if the tracking point is right on the nodal point k: */
                if (fabs(pro)<1.e-12) {
                     node=TRUE;
                     s = 0.0;
                } else if (pro < 0.0) {
                     printf("\nVehicle %d moves backward to segment %d.\n",vn,k);
                     k--;                                          /* restored */
                     if(k>4) s=1.0;
                } /* else k+=0; */
           /****************************************/
           /* Is vehicle in the region close to the nodal point k+1? */
           /****************************************/
           } else if (dt(r,cen[3]) <= rad3) {
                /* compute the tangent vector at nodal point k+1:*/
                if (k!=NP-1) for (i=1;i<=3;i++) tan[i]=C[i][k+1][3];
                else for (i=1;i<=3;i++) tan[i]=3*C[i][k][1]+2*C[i][k][2]+C[i][k][3];
                for (i=1;i<=3;i++) q[i]=r[i]-cen[3][i];
                pro=DOT3(q,tan);
                /* Check if the tracking point is right on the nodal point k+1: */
                if (fabs(pro)<1.e-12) {
                     node=TRUE;
                     s=1.0;
                } else if (pro > 0. && dt(r,cen[2])> dist_23){
                     printf("\nVehicle %d moves forward to segment %d.\n",vn,k);
                     k++;
                     if(k>4) s=0.0;
                } /* else k+=0; */
           } else range_error(2,vn);
          } else range_error(3,vn);
     }
 }
 if (k<1) range_error(4,vn);
 if (k>NP) {
      printf("\n\n r=%lf %lf %lf\n",r[1],r[2],r[3]);
      printf("The vehicle %d reaches the end of the road!\n",vn);
      exit(EXIT_FAILURE);
 }
 /****************************************/
 /* Determine the tracking point within the road segment: */
 /****************************************/
 /* The tracking point on the road corresponds to the smallest distance from
 the vehicle to the road curve. */
 if (!node) {
      /* parameters for minimize() and dist_road() and d_road() */
      si[1]=s;
      for (i=1;i<=4;i++) for (j=1;j<=3;j++) si[4*j-3+i]=C[j][k][i];
      si[5]-=r[1];
      si[9]-=r[2];
      si[13]-=r[3];
      minimize(si,1,dist_road,d_road,si);
      s=si[1];
      if (s<-0.0001 || s>1.0001){
           printf("k=%d s=%lf v=%d \n",k,s,vn);
           printf("\nWarning! Tracking of vehicle lost!\n");
           printf("Please modify the %dth data point in file: road.dat.\n",k);
           nrerror("\n");
      }
 }
 /* cubic interpolation: compute tracking point and tangent vector: */
 c_s= s*s*s; s_s=s*s;
 for (i=1;i<=3;i++) {
      tp[i]= C[i][k][1]*c_s+C[i][k][2]*s_s+C[i][k][3]*s+C[i][k][4];
      tangent[i]= 3*C[i][k][1]*s_s+2*C[i][k][2]*s+C[i][k][3];
 }
 tangent[1] = fabs(tangent[1]);
 /* and make it a unit tangent vector: */
 dummy=sqrt(DOT3(tangent,tangent));
 for (i=1;i<=3;tangent[i++]/=dummy);
 /****************************************/
 /* compute the unit normal vector of the road plan: */
 /****************************************/
 /* linear interpolation of banking angle: */
 /* positive: cw, negative: ccw viewed from the origin of tangent vector */
 if(k==1) angle= 0.0;
 if(k==2) angle= 3*(XIN[k+1][4]-XIN[k][4])*s+XIN[k][4];
 if(k==3) angle= 3*(XIN[k+1][4]-XIN[k][4])*s+2*XIN[k][4]-XIN[k+1][4];
 if(k==4) angle= 3*(XIN[k+1][4]-XIN[k][4])*s+3*XIN[k][4]-2*XIN[k+1][4];
 if(k>4) angle= (XIN[k+1][4]-XIN[k][4])*s+XIN[k][4];
 s_t=sin(angle); c_t=cos(angle);
 alpha=atan(tangent[2]/tangent[1]);
 s_a=sin(alpha); c_a=cos(alpha); s_b= tangent[3];
 normal[1]= -c_t*s_b*c_a+s_t*s_a;
 normal[2]= -c_t*s_b*s_a-s_t*c_a;
 normal[3]= c_t*sqrt(square(tangent[1])+square(tangent[2]));
 free_matrix(cen);
 v->road.segment=k;
 v->road.parameter=s;
}

void range_error(int k, int n)
{
 printf("\n\nErr %d: vehicle %d is out of road range!\n",k,n);
 printf("Now exiting to System!\n\n");
 exit(EXIT_FAILURE);
}

/****************************************************************************/
/*                            Distance function                             */
/****************************************************************************/
double dist_road(Vector x)
/* Input x[1] is the natural parameter of the tracking point on the road.
     dist_road() returns the distance between the mass center of vehicle and the
     corresponding tracking point on the road. x[2]-x[16] are used to pass the
     values XC[1]-XC[4], YC[1]-YC[4] and ZC[1]-ZC[4] for the current segment. */
{
 double q=x[1], sq=q*q, cq=sq*q;
 return sqrt(square(x[2]*cq+x[3]*sq+x[4]*q+x[5])+
             square(x[6]*cq+x[7]*sq+x[8]*q+x[9])+
             square(x[10]*cq+x[11]*sq+x[12]*q+x[13]));
}

/****************************************************************************/
/*                            Gradient function                             */
/****************************************************************************/
void d_road(Vector g, Vector x)
/* Input x[1] is the natural parameter of the tacking point on the road.
      Output g is the gradient at the tracking point x[1]. x[2]-x[13] are used
      to pass the values XC[1]-XC[4], YC[1]-YC[4] and ZC[1]-ZC[4] for the current
      segment. */
{
  int i;
  double q=x[1], sq=q*q, cq=sq*q;
  double dummy[4], s=0.0;

  for (i=1;i<=3;i++) dummy[i] = cq*x[4*i-2]+sq*x[4*i-1]+q*x[4*i]+x[4*i+1];
  for (i=1;i<=3;i++) s += dummy[i]*dummy[i];
  g[1]=(3*sq*x[2]+2*q*x[3]+x[4])*dummy[1]+
       (3*sq*x[6]+2*q*x[7]+x[8])*dummy[2]+
       (3*sq*x[10]+2*q*x[11]+x[12])*dummy[3];
  g[1] /= sqrt(s);
}
