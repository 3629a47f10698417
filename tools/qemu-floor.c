/*
 * The floor of `pmu stat -- PROG`'s QEMU side: a QEMU plugin that asks for the
 * callbacks pmukit's plugin asks for (each translated block's execution and each
 * instruction's memory accesses) and does nothing in them. What QEMU takes with it is
 * what no work in pmukit's plugin can go below (docs/PERFORMANCE.md, "Programs under
 * QEMU"). Not built with the workspace: a measuring aid.
 *
 *   gcc -O2 -shared -fPIC -o /tmp/qemu-floor.so tools/qemu-floor.c
 *   qemu-arm -cpu arm1176 -plugin /tmp/qemu-floor.so ./sort-arm
 *
 * QEMU's plugin API version 1 (QEMU 4.2 to 8.x) is declared here from its
 * documentation, as crates/qemu/src/api.rs declares it, so that no GPL header is
 * needed.
 */
#include <stddef.h>
#include <stdint.h>

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum { CB_NO_REGS = 0, MEM_RW = 3 };

int qemu_plugin_version = 1;

extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
extern void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, void (*cb)(unsigned, void *), int flags,
                                                 void *udata);
extern void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
                                             void (*cb)(unsigned, qemu_plugin_meminfo_t, uint64_t, void *), int flags,
                                             int rw, void *udata);
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                                  void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));

/* Written, so that the calls are not optimised away. */
static volatile uint64_t seen;

static void block_started(unsigned vcpu, void *udata) { seen++; }

static void accessed(unsigned vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata) { seen += vaddr; }

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    qemu_plugin_register_vcpu_tb_exec_cb(tb, block_started, CB_NO_REGS, NULL);
    for (size_t i = 0; i < qemu_plugin_tb_n_insns(tb); i++)
        qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, i), accessed, CB_NO_REGS, MEM_RW, NULL);
}

int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv) {
    qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
    return 0;
}
