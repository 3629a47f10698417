/* A matrix multiply: double precision, i-k-j order, 160 x 160. */
#include <stdio.h>

enum { N = 160 };
static double a[N][N], b[N][N], c[N][N];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) { a[i][j] = i + j * 0.5; b[i][j] = i * 0.25 - j; }
    for (int i = 0; i < N; i++)
        for (int k = 0; k < N; k++) {
            double x = a[i][k];
            for (int j = 0; j < N; j++) c[i][j] += x * b[k][j];
        }
    double trace = 0;
    for (int i = 0; i < N; i++) trace += c[i][i];
    printf("matmul %.1f\n", trace);
    return 0;
}
