/* An interpreter loop: a bytecode machine dispatching through a switch (an indirect
   jump), running a program that counts primes. */
#include <stdio.h>

enum { PUSH, LOAD, STORE, ADD, SUB, MOD, JZ, JMP, LT, HALT, DUP, POP };

static const int code[] = {
    /* n = 2 */ PUSH, 2, STORE, 0,
    /* loop: if !(n < 20000) halt */ LOAD, 0, PUSH, 20000, LT, JZ, 54,
    /* d = 2 */ PUSH, 2, STORE, 1,
    /* inner: while d < 150 (then n is prime) */ LOAD, 1, PUSH, 150, LT, JZ, 38,
    /* if n % d == 0 -> next n */ LOAD, 0, LOAD, 1, MOD, JZ, 45,
    /* d++ */ LOAD, 1, PUSH, 1, ADD, STORE, 1, JMP, 15,
    /* prime: count++ */ LOAD, 2, PUSH, 1, ADD, STORE, 2,
    /* next: n++ */ LOAD, 0, PUSH, 1, ADD, STORE, 0, JMP, 4,
    HALT,
};

int main(void) {
    long stack[64], vars[4] = {0};
    int sp = 0, pc = 0;
    long steps = 0;
    for (;;) {
        steps++;
        switch (code[pc++]) {
        case PUSH: stack[sp++] = code[pc++]; break;
        case LOAD: stack[sp++] = vars[code[pc++]]; break;
        case STORE: vars[code[pc++]] = stack[--sp]; break;
        case ADD: sp--; stack[sp - 1] += stack[sp]; break;
        case SUB: sp--; stack[sp - 1] -= stack[sp]; break;
        case MOD: sp--; stack[sp - 1] %= stack[sp]; break;
        case LT: sp--; stack[sp - 1] = stack[sp - 1] < stack[sp]; break;
        case JZ: { int t = code[pc++]; if (!stack[--sp]) pc = t; break; }
        case JMP: pc = code[pc]; break;
        case DUP: stack[sp] = stack[sp - 1]; sp++; break;
        case POP: sp--; break;
        default: printf("interp %ld %ld\n", vars[2], steps); return 0;
        }
    }
}
