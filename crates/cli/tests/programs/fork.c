/* A program that forks: the child runs a loop of its own and exits with 3, the parent
   waits for it and passes its status on. pmu counts the parent; the child runs under
   QEMU unmeasured (docs/binaries.md). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    volatile long sum = 0;
    pid_t child = fork();
    if (child < 0) return 1;
    for (long i = 0; i < 60000; i++) sum += i;
    if (child == 0) {
        printf("child %ld\n", sum);
        return 3;
    }
    int status;
    if (waitpid(child, &status, 0) != child) return 1;
    printf("parent %ld, child %d\n", sum, WEXITSTATUS(status));
    return 0;
}
