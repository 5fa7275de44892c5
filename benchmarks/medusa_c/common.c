/****************************************************************************/
/*                                 common.c                                 */
/* created by Peter Varadi and Gwo-Jeng Lo, modified June 30, 1998, 479 lines */
/****************************************************************************/
/* common.c contains some programing tools and vector and matrix related    */
/* material. It is adapted from:                                            */
/*   W. H. Press, S. A. Teukolsky, W. T. Vetterling and B. P. Flannery,     */
/*   Numerical Recipes in C: the Art of Scientific Computing. 2nd ed.,      */
/*   Cambridge University Press, 1992.                                      */
/****************************************************************************/
/* Functions:                                                               */
/* - max()          line 49     - dot()                  line 124           */
/* - min()          line 50     - vector_product()       line 134           */
/* - square()       line 51     - matrix_times_vector()  line 142           */
/* - dt()           line 52     - matrix_times_matrix()  line 156           */
/* - nrerror()      line 55     - matrix_transpose()     line 170           */
/* - vector()       line 71     - matrix_inverse()       line 177           */
/* - ivector()      line 80     - lin_solve()            line 202           */
/* - matrix         line 89     - ludcmp()               line 222           */
/* - free_vector()  line 108    - lubksb()               line 281           */
/* - free_ivector() line 110    - minimize()             line 330           */
/* - free_matrix()  line 112    - linsearch()            line 412           */
/*                              - projection()           line 467           */
/****************************************************************************/
/* Transcribed from the MEDUSA report (UCB-ITS-PRR-99-32), Appendix F, for   */
/* benchmarking only; see README.md for what was repaired.                  */
/* -DMINIMIZE_AS_PRINTED leaves out the restored `fp=fret;` in minimize().  */
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <math.h>
#include "common.h"

void ludcmp(Matrix a, int n, int *indx, Vector d);
void lubksb(Matrix a, int n, int *indx, double b[]);

double max(double x, double y) { return (x>y) ? x : y; }
double min(double x, double y) { return (x<y) ? x : y; }
double square(double x) { return x*x; }
double dt(double x[], double y[])
{ return sqrt(square(x[1]-y[1])+square(x[2]-y[2])+square(x[3]-y[3])); }

void nrerror(char error_text[])
/* Numerical Recipes standard error handler */
{
     fprintf(stderr,"Run-time error...\n");
     fprintf(stderr,"%s\n",error_text);
     fprintf(stderr,"...now exiting to system\n");
     exit(EXIT_FAILURE);
}

/****************************************************************************/
/*                            memory management                             */
/****************************************************************************/
#define FREE_ARG char*

Vector vector(int n)
/* allocate a double vector with subscript range v[1..n] */
{
     Vector v;
     v=(double *) malloc((size_t) (n*sizeof(double)));
     if (!v) nrerror("allocation failure in vector()");
     return v-1;
}

int *ivector(int n)
/* allocate an int vector with range v[1..n] */
{
     int *v;
     v=(int *) malloc((size_t) (n*sizeof(int)));
     if (!v) nrerror("allocation failure in ivector()");
     return v-1;
}

Matrix matrix(int nrow, int ncol)
/* allocate a double matrix with range m[1..nrow][1..ncol] */
{
     int i;
     Matrix m;
     /* allocate pointers to rows */
     m=(double **) malloc((size_t)(nrow*sizeof(double*)));
     if (!m) nrerror("allocation failure 1 in matrix()");
     m-=1;
     /* allocate rows and set pointers to them */
     m[1]=(double *) malloc((size_t)((nrow*ncol)*sizeof(double)));
     if (!m[1]) nrerror("allocation failure 2 in matrix()");
     m[1]-=1;
     for(i=2;i<=nrow;i++) m[i]=m[i-1]+ncol;
     /* return pointer to array of pointers to rows */
     return m;
}

void free_vector(Vector v) { free((FREE_ARG) (v+1)); }
/* free a double vector allocated with vector() */
void free_ivector(int *v) { free((FREE_ARG) (v+1)); }
/* free an int vector allocated with ivector() */
void free_matrix(Matrix m)
/* free a double matrix allocated with matrix() */
{
     free((FREE_ARG) (m[1]+1));
     free((FREE_ARG) (m+1));
}

/****************************************************************************/
/*                            matrix operations                             */
/****************************************************************************/
double dot(Vector x, Vector y, int n)
/* calculates scalar product <x,y> of two n vectors */
{
 int i;
 double dummy=0.0;
 for (i=1;i<=n;i++) dummy += x[i]*y[i];
 return dummy;
}

void vector_product(Vector a, Vector b, Vector c)
/* calculates a=b x c */
{
 a[1]=b[2]*c[3]-c[2]*b[3];
 a[2]=b[3]*c[1]-c[3]*b[1];
 a[3]=b[1]*c[2]-c[1]*b[2];
}

void matrix_times_vector(Vector y, Matrix A, Vector x, int nrow, int ncol)
/* calculates y=Ax. A and x are input, y is output. A is a nrow by ncol matrix.
     x is a ncol vector, y is a nrow vector. */
{
     long double dummy;          /* This reduces numerical error. */
     int i,j;
     for (i=1;i<=nrow;i++) {
          dummy=0.0;
          for (j=1;j<=ncol;j++) dummy+=A[i][j]*x[j];
          y[i]=dummy;
     }
}

void matrix_times_matrix(Matrix Y, Matrix A, Matrix B, int M, int N, int P)
/* calculates Y=AB. A is a M by N matrix, B is a N by P matrix and Y is a M by
     P matrix. */
{
 int m,n,p;
 long double dummy;
 for (m=1;m<=M;m++) for (p=1;p<=P;p++) {
      dummy=0.0;
      for (n=1;n<=N;n++) dummy += A[m][n]*B[n][p];
      Y[m][p]=dummy;
 }
}

void matrix_transpose(Matrix Y, Matrix A, int nrow, int ncol)
/* A=Y^T , where Y is a nrow*ncol matrix, A is a ncol*nrow matrix */
{
 int i,j;
 for (i=1;i<=ncol;i++) for (j=1;j<=nrow;j++) A[i][j]=Y[j][i];
}

void matrix_inverse(Matrix a, int n, Matrix y)
/* Calculates the inverse y of a square matrix a. n is the size of the matrix.
     This function is explained in the Numerical Recipes in C on page 48. */
{
     double d;
     int i, j, *indx;
     Vector col;
     Matrix b;

     col=vector(n);
     indx=ivector(n);
     b=matrix(n,n);                     /* create a working copy of a in b */
     for (i=1;i<=n;i++) for (j=1;j<=n;j++) b[i][j]=a[i][j];
     ludcmp(b,n,indx,&d);
     for (j=1;j<=n;j++) {
           for (i=1;i<=n;i++) col[i]=0.0;
           col[j]=1.0;                  /* repaired: printed col[i]=1.0; */
           lubksb(b,n,indx,col);
           for (i=1;i<=n;i++) y[i][j]=col[i];
     }
     free_matrix(b);
     free_ivector(indx);
     free_vector(col);
}

void lin_solve(Matrix a, int n, Vector b)
/* This function solves ax=b for x. a is an quadratic matrix of size n that
     is subsequently changed. The vector b is replaced by x. This function is
     explained on page 48 of the Numerical Recipes in C. */
{
     double d;
     int *indx;

     indx=ivector(n);
     ludcmp(a,n,indx,&d);
     lubksb(a,n,indx,b);
     free_ivector(indx);
}

/****************************************************************************/
/*                             Utility Routines                             */
/****************************************************************************/
#define TINY 1.0e-20;

void ludcmp(Matrix a, int n, int *indx, Vector d)
/* Numerical Recipes in C, page 46/47:
     Given a matrix a[1..n][1..n], this routine replaces it by the LU
     decomposition of a rowwise permutation of itself. a and n are input. a is
     output, arranged as in equation (2.3.14); indx[1..n] is an output vector
     that records the row permutation effected by the partial pivoting; d is
     output as +/-1 depending on whether the number of row interchanges was even
     or odd, respectively. This routine is used in combination with lubksb() to
     solve linear equations or invert a matrix. */
{
      int i, imax=0, j, k;   /* imax=0: silences -Wmaybe-uninitialized only */
      double big, dum, sum, temp;
      Vector vv;

      vv=vector(n);
      *d=1.0;
      for (i=1;i<=n;i++) {
            big=0.0;
            for (j=1;j<=n;j++)
                  if ((temp=fabs(a[i][j])) > big) big=temp;
            if (big == 0.0) nrerror("Singular matrix in routine ludcmp");
            vv[i]=1.0/big;
      }
      for (j=1;j<=n;j++) {
            for (i=1;i<j;i++) {
                  sum=a[i][j];
                  for (k=1;k<i;k++) sum -= a[i][k]*a[k][j];
                  a[i][j]=sum;
            }
            big=0.0;
            for (i=j;i<=n;i++) {
                  sum=a[i][j];
                  for (k=1;k<j;k++)
                        sum -= a[i][k]*a[k][j];
                  a[i][j]=sum;
                  if ( (dum=vv[i]*fabs(sum)) >= big) {
                        big=dum;
                        imax=i;
                  }
            }
            if (j != imax) {
                  for (k=1;k<=n;k++) {
                        dum=a[imax][k];
                        a[imax][k]=a[j][k];
                        a[j][k]=dum;
                  }
                  *d = -(*d);
                  vv[imax]=vv[j];
            }
            indx[j]=imax;
            if (a[j][j] == 0.0) a[j][j]=TINY;
            if (j!=n) {
                  dum=1.0/(a[j][j]);
                  for (i=j+1;i<=n;i++) a[i][j] *= dum;
            }
      }
      free_vector(vv);
}

void lubksb(Matrix a, int n, int *indx, double b[])
/* Numerical Recipes in C, page 47:
     Solves the set of n linear equations AX=B. Here a[1..n][1..n] is input, not
     as the matrix A but rather as its LU decomposition, determined by the
     routine ludcmp(). indx[1..n] is input as the permutation vector returned by
     ludcmp(). b[1..n] is input as the right-hand side vector B, and returns with
     the solution vector X. a,n and indx are not modified by this routine and can
     be left in place for successive calls with different right-hand sides b.
     This routine takes into account the possibility that b will begin with many
     zero elements, so it is efficient for use in matrix inversion. */
{
     int i, ii=0, ip, j;
     double sum;

     for (i=1;i<=n;i++) {
          ip=indx[i];
          sum=b[ip];
          b[ip]=b[i];
          if (ii) for (j=ii;j<=i-1;j++) sum -= a[i][j]*b[j];
          else if (sum) ii=i;
          b[i]=sum;
     }
     for (i=n;i>=1;i--) {
          sum=b[i];
          for (j=i+1;j<=n;j++) sum -= a[i][j]*b[j];
          b[i]=sum/a[i][i];
     }
}

/****************************************************************************/
/*                          Variable Metric Method                          */
/****************************************************************************/
/* Global Variables */
static double dsqrarg;
static double maxarg1, maxarg2;
#define DSQR(a) ((dsqrarg=(a)) == 0.0 ? 0.0 : dsqrarg*dsqrarg)
#define FMAX(a,b) (maxarg1=(a),maxarg2=(b),(maxarg1) > (maxarg2) ? (maxarg1) : (maxarg2))
#define ITMAX 500
#define EPS 1.e-15
#define TOLX (4*EPS)
#define STPMX 200.
#define GTOL 1.e-12

void minimize(Vector x, int n, double (*f)(Vector),
              void (*df)(Vector, Vector), Vector parameter)
/* Uses the Variable-Metric method to solve for the local minimum of the
      function f(x) where x is a vector of length n<=4. df() is the gradient of f()
      and parameter is a vector containing constant parameters for f() and df(). */
{
      void linsearch(Vector, int, double, Vector, Vector, double *, double,
                     double (*f)(Vector), Vector);
      int i, its, j;
      double fret, den, fac, fad, fae, fp, stpmax, sum=0.0, sumdg, sumxi, temp, test;
      double dg[5], g[5], hdg[5], xold[5], xi[5];
      Matrix hessin=matrix(4,4);

      fp= (*f)(parameter);
      (*df)(g,parameter);                         /* dfpmin begins here */
      for (i=1;i<=n;i++) {
            for (j=1;j<=n;j++) hessin[i][j]=0.0;
            hessin[i][i]= 1.0;
            xi[i] = -g[i];
            sum += x[i]*x[i];
      }
      stpmax=STPMX*FMAX(sqrt(sum),(double)n);
      for (its=1;its<=ITMAX;its++) {
            for (i=1;i<=n;i++) xold[i]=x[i];
            linsearch(x, n, fp, g, xi, &fret, stpmax, f, parameter);
#ifndef MINIMIZE_AS_PRINTED
            fp=fret;                               /* restored (NR dfpmin) */
#endif
            for (i=1;i<=n;i++) xi[i]=x[i]-xold[i];
            test=0.0;
            for (i=1;i<=n;i++) {
              temp=fabs(xi[i])/FMAX(fabs(x[i]),1.0);
              if (temp > test) test=temp;
            }
            if (its >ITMAX-1 && test>1.e-5) test=0.;
            if (test < TOLX) {
                  free_matrix(hessin);
                  return;
            }
            for (i=1;i<=n;i++) dg[i]=g[i];
            (*df)(g,parameter);
            test=0.0;
            den=FMAX(fret,1.0);
            for (i=1;i<=n;i++) {
                  temp=fabs(g[i])*FMAX(fabs(x[i]),1.0)/den;
                  if (temp > test) test=temp;
            }
            if (its >ITMAX-1 && test>1.e-5) test=0.;
            if (test < GTOL){
                  free_matrix(hessin);
                  return;
            }
            for (i=1;i<=n;i++) dg[i]=g[i]-dg[i];
            for (i=1;i<=n;i++) {
                  hdg[i]=0.0;
                  for (j=1;j<=n;j++) hdg[i] += hessin[i][j]*dg[j];
            }
            fac=fae=sumdg=sumxi=0.0;
            for (i=1;i<=n;i++) {
                  fac += dg[i]*xi[i];
                  fae += dg[i]*hdg[i];
                  sumdg += DSQR(dg[i]);
                  sumxi += DSQR(xi[i]);
            }
            if (fac*fac > EPS*sumdg*sumxi){
                  fac=1.0/fac;
                  fad=1.0/fae;
                  for (i=1;i<=n;i++) dg[i]=fac*xi[i]-fad*hdg[i];
                  for (i=1;i<=n;i++) for (j=1;j<=n;j++)
                        hessin[i][j] += fac*xi[i]*xi[j]-fad*hdg[i]*hdg[j]+fae*dg[i]*dg[j];
            }
            for (i=1;i<=n;i++) {
                  xi[i]=0.0;
                  for (j=1;j<=n;j++) xi[i] -= hessin[i][j]*g[j];
            }
      }
      nrerror("too many iterations in minimize");
      free_matrix(hessin);
}
#undef TOLX

#define ALF 1.e-4
#define TOLX 1.e-9

void linsearch(Vector x, int n, double fold, Vector g, Vector p, double *f,
               double stpmax, double (*funct)(Vector), Vector parameter)
/* Given the vector x of length n<=4, the value of the function fold and
gradient g there, and a direction p[1..2 or 4], linsearch finds a new point
state along the direction p from the original state where the function func()
has decreased "sufficiently". The new function value is returned in f. stpmax is
an input quantity that limits the length of the steps. p is usually the Newton
direction. Parameter is the vector for funct(). */
{
      int i;
      double a, alam, alam2=0.0, alamin, b, disc, f2=0.0, rhs1, rhs2, slope, sum;
      double temp, test, tmplam, xold[5];   /* alam2, f2 =0.0: silence warnings only */

      for (i=1;i<=n;i++) xold[i]=x[i];
      for (sum=0.0,i=1;i<=n;i++) sum += p[i]*p[i];
      sum=sqrt(sum);
      if(sum > stpmax) for (i=1;i<=n;i++) p[i] *= stpmax/sum;
      for (slope=0.0,i=1;i<=n;i++) slope += g[i]*p[i];
      test=0.0;
      for (i=1;i<=n;i++){
            temp=fabs(p[i])/FMAX(xold[i],1.0);
            if (temp > test) test=temp;
      }
      if (test == 0.0) alamin= 1.e+12;
      else alamin=TOLX/test;
      alam=1.0;
      for (;;) {
            for (i=1;i<=n;i++) x[i]=xold[i]+alam*p[i];
            *f= (*funct)(parameter);
            if(alam < alamin) {
                  for (i=1;i<=n;i++) x[i]=xold[i];
                  return;
            } else if (*f <= fold+ALF*alam*slope) return;
            else {
                  if (alam == 1.0) tmplam = -slope/(2.0*(*f-fold-slope));
                  else {
                        rhs1= *f-fold-alam*slope;
                        rhs2= f2-fold-alam2*slope;
                        a= (rhs1/(alam*alam)-rhs2/(alam2*alam2))/(alam-alam2);
                        b= (-alam2*rhs1/(alam*alam)+alam*rhs2/(alam2*alam2))/(alam-alam2);
                        if (a==0.0) tmplam= -slope/(2.0*b);
                        else {
                              disc= b*b-3.*a*slope;
                              tmplam= (-b+sqrt(fabs(disc)))/(3.0*a);
                        }
                        if (tmplam > 0.5*alam) tmplam= 0.5*alam;
                  }
            }
            alam2=alam;
            f2= *f;
            alam=FMAX(tmplam,0.1*alam);
      }
}

double projection(Matrix *C, Vector cen, Vector r, int k)
/* This function returns the projection of a vector q[] along tangent direction
of nodal point k. */
{
      int i;
      double tan[4],q[4];

      tan[1]=fabs(C[1][k][3]);     /* tangent vector at nodal point k */
      tan[2]=C[2][k][3];
      tan[3]=C[3][k][3];
      for (i=1;i<=3;i++) q[i]=r[i]-cen[i];
      return DOT3(q,tan);
}
