package heal

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stubasm"
)

// heal.bin is healcode/heal.S built.
func TestBlobMatchesSource(t *testing.T) {
	stubasm.Blob(t, "heal.bin", "healcode/heal.S", code, stubasm.Objcopy)
}

// The handler and the Go side agree on every offset and constant they
// share.
func TestLayoutMatchesAssembly(t *testing.T) {
	stubasm.Layout(t, "healcode/heal.S", map[string]uint64{
		"restore": restore, "restorer": restorer, "count": count,
		"old_act": oldAct, "new_act": newAct, "inject_trap": injectTrap,
		"inject_valid": injectValid, "inject_regs": injectRegs,
		"area_count": areaCount, "areas": areasAt, "in_use": inUse, "table": table,
		"SI_KERNEL": ptrace.SIKernel, "MAGIC": magic, "SIGTRAP": uint64(unix.SIGTRAP),
		"SYS_mprotect": unix.SYS_MPROTECT, "SYS_rt_sigaction": unix.SYS_RT_SIGACTION,
		"SYS_rt_sigreturn": unix.SYS_RT_SIGRETURN, "SYS_getpid": unix.SYS_GETPID,
		"SYS_gettid": unix.SYS_GETTID, "SYS_tgkill": unix.SYS_TGKILL,
		"park_handler": parkHandler, "park_old_act": parkOldAct, "park_new_act": parkNewAct,
		"park_cookie": parkCookie, "park_deadline": parkDeadline, "park_slots": parkSlots,
		"PARK_SLOTS": ParkSlots, "PARK_SLOT_SIZE": parkSlotSize, "PARK_MAGIC": parkMagic,
		"PARK_ASKED": uint64(ParkAsked), "PARK_PARKED": uint64(ParkParked), "PARK_LEFT": uint64(ParkLeft),
		"SIGURG": uint64(unix.SIGURG), "SI_QUEUE": siQueue, "SYS_rt_sigprocmask": unix.SYS_RT_SIGPROCMASK,
		"SYS_nanosleep": unix.SYS_NANOSLEEP, "SYS_clock_gettime": unix.SYS_CLOCK_GETTIME,
		"CLOCK_MONOTONIC": unix.CLOCK_MONOTONIC,
	}, []string{"TRAP_TRACE", "EFLAGS_TF", "UC_GREGS", "UC_RIP", "UC_EFL", "NGREGS_SAVED"})
}
