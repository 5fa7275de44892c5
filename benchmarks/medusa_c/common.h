/****************************************************************************/
/*                                 common.h                                 */
/* created by Peter Varadi, last modified April 21, 1999, 118 lines         */
/****************************************************************************/
/* This file defines some general tools and matrix operations. It also de-  */
/* fines the global structure data types simu_struct and vehicle_struct for */
/* storing simulation and vehicle data.                                     */
/****************************************************************************/
/* Transcribed from the MEDUSA report (UCB-ITS-PRR-99-32), Appendix F, for   */
/* benchmarking only; see README.md for what was repaired. Lines marked     */
/* "restored" were lost from the printed listing.                           */

#define LANEWIDTH 3.0 /* The width of a lane in meters */

/* scalar product of two 3-vectors */
#define DOT3(x,y) (x[1]*y[1]+x[2]*y[2]+x[3]*y[3])
#define FALSE 0
#define TRUE 1
#define Pi 3.1415926535898

double max(double x, double y);
double min(double x, double y);
double square(double x);
double dt(double x[], double y[]);
void nrerror(char error_text[]);                   /* error handler */

typedef double *Vector;
typedef double **Matrix;
Vector vector(int n);                               /* allocate Vector */
int *ivector(int n);                                /* restored */
Matrix matrix(int nrow, int ncol);                  /* restored: allocate Matrix */
void free_vector(Vector);
void free_ivector(int *);                           /* restored */
void free_matrix(Matrix);

typedef struct {                  /* vehicle parameters */
 int ident;                       /* number that identifies the vehicle */
 Vector z;                        /* state vector */
 struct {
     double m;                    /* mass of car in kg */
     Matrix I;                    /* inertia matrix */
     Matrix I_inv;                /* inverse inertia matrix */
     double lam, tm;              /* elastic properties of Cosserat point */
 } Cosserat_point;
 struct {
     double steer_angle;
     double X1[5], X2[5], X3[5];  /* coordinates of assembly points in m wrt. */
                                  /* Xi[0] is void. */
     double spring_ref;           /* reference length of the suspension springs in m */
     double C[5], D[5];           /* spring and damping constants of the suspension */
                                  /* in N/m. C[0] and D[0] are void. */
     Matrix infl;                 /* influence matrix */
 } suspension;
 struct {
     double tau_inv;              /* restored: inverse of the tire lag parameter in 1/s */
     double speed;                /* tire speed in m/s */
     int driven;                  /* is the tire driven or undriven? */
 } tire;
 struct {
     int segment;                 /* road segment number */
     double parameter;            /* position within the segment */
 } road;
 struct {
     double dimension_box[4];     /* physical dimensions of vehicles */
     Vector force;                /* resultant constraint force */
     Matrix previous;             /* previous contact points with other vehicles */
     Matrix multiplier;           /* Lagrange multipliers */
 } contact;
 struct {                         /* equilibrium state */
   double r3;
   Matrix F;
 } init;
} vehicle_struct;

typedef struct {                  /* simulation parameters */
 char *in_file;                   /* name of the platoon description file */
 FILE *ofp;                       /* scratch file */
 int NofV;                        /* number of vehicles */
 int NofM;                        /* number of models in model array */
 vehicle_struct *model;           /* model array */
 vehicle_struct *vehicle;         /* vehicle array, i.e., platoon */
 struct {
      double delta_t;             /* restored: integration stepsize */
      double end_time;            /* restored: end time of the simulation */
      double save_delta_t;        /* time intervals for saving a data point */
      double time;                /* current time */
 } integrate;
 struct {                         /* road related parameters */
      int nodal_points;           /* number of nodes that define the road */
      Matrix XIN;                 /* nodal coordinates */
      Matrix *C;                  /* road coefficients */
 } road;
} simu_struct;

/****************************************************************************/
/*                      Vector and Matrix operations                        */
/****************************************************************************/
double dot(Vector x, Vector y, int n);
     /* calculates scalar product <x,y> */
void vector_product(Vector a, Vector b, Vector c);
     /* calculates a=b x c */
void matrix_times_vector(Vector y, Matrix A, Vector x, int nrow, int ncol);
     /* calculates y=Ax */
void matrix_times_matrix(Matrix Y, Matrix A, Matrix B, int M, int N, int P);
     /* calculates Y=AB */
void matrix_transpose(Matrix Y, Matrix A, int nrow, int ncol);
     /* calculates transpose of Y */
void lin_solve(Matrix A, int n, Vector b);
     /* This function solves Ax=b for x and returns x in b. A is changed. */
void matrix_inverse(Matrix A, int n, Matrix Ainv);
     /* inverse Ainv of A */

/* restored: declarations of the other common.c functions used across files */
void minimize(Vector x, int n, double (*f)(Vector),
              void (*df)(Vector, Vector), Vector parameter);
double projection(Matrix *C, Vector cen, Vector r, int k);
