/* A call tree: the naive Fibonacci recursion, calls and returns all the way down. */
#include <stdio.h>

static long __attribute__((noinline)) fib(long n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void) {
    printf("calls %ld\n", fib(20));
    return 0;
}
