/* A pointer-chasing walk over a linked list of 4,096 nodes, 64 times. */
#include <stdio.h>
#include <stdlib.h>

struct node {
    struct node *next;
    long value;
};

int main(void) {
    enum { NODES = 4096 };
    struct node *nodes = malloc(NODES * sizeof *nodes);
    if (!nodes) return 1;
    /* A stride that visits every node once before coming back. */
    for (long i = 0; i < NODES; i++) {
        nodes[i].next = &nodes[(i * 1029 + 7) % NODES];
        nodes[i].value = i;
    }
    long sum = 0;
    struct node *p = nodes;
    for (long k = 0; k < 64L * NODES; k++) {
        sum += p->value;
        p = p->next;
    }
    printf("list %ld\n", sum);
    free(nodes);
    return 0;
}
