/* A tiny program for a Lackey trace: sums a table, walks a linked list, and exits. */
#define N 512
static long table[N];
struct node { struct node *next; long v; };
static struct node nodes[256];

static long walk(struct node *n) { long s = 0; while (n) { s += n->v; n = n->next; } return s; }

void _start(void) {
    long s = 0;
    for (int i = 0; i < N; i++) table[i] = i * 3;
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < N; i++) s += (table[i] & 1) ? table[i] : -table[i];
    for (int i = 0; i < 255; i++) { nodes[i].next = &nodes[(i * 97 + 1) % 256]; nodes[i].v = i; }
    nodes[255].next = 0;
    s += walk(&nodes[0]);
    __asm__ volatile("mov $60, %%eax; mov %0, %%rdi; syscall" :: "r"(s & 0) : "rax", "rdi");
    for (;;) {}
}
