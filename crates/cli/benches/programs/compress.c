/* A compression kernel: run-length and LZ-style match search over a generated text,
   the inner loops of a byte-oriented compressor. */
#include <stdio.h>
#include <string.h>

enum { SIZE = 1 << 16, WINDOW = 64 };
static unsigned char text[SIZE], out[2 * SIZE];

int main(void) {
    unsigned seed = 12345;
    for (int i = 0; i < SIZE; i++) {
        seed = seed * 1103515245 + 12345;
        /* Words from a small alphabet, so matches are common. */
        text[i] = "abcdefgh ijklmno"[(seed >> 16) & 15];
    }
    long written = 0;
    for (int round = 0; round < 1; round++) {
        int n = 0;
        for (int i = 0; i < SIZE;) {
            int best = 0, dist = 0;
            for (int d = 1; d <= WINDOW && d <= i; d++) {
                int l = 0;
                while (i + l < SIZE && l < 255 && text[i + l] == text[i - d + l]) l++;
                if (l > best) { best = l; dist = d; }
            }
            if (best >= 3) { out[n++] = 0; out[n++] = (unsigned char)dist; out[n++] = (unsigned char)best; i += best; }
            else out[n++] = text[i++];
        }
        written += n;
    }
    printf("compress %ld\n", written);
    return 0;
}
