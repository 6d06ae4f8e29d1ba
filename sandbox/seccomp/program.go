package seccomp

import (
	"fmt"
	"slices"

	"golang.org/x/net/bpf"
)

// Return values of a seccomp filter (linux/seccomp.h). The action is in the
// high 16 bits; for SECCOMP_RET_ERRNO the low 16 bits are the errno.
const (
	retKillProcess = 0x80000000
	retErrno       = 0x00050000
	retAllow       = 0x7fff0000
)

// Offsets into struct seccomp_data, the "packet" a seccomp filter reads:
//
//	struct seccomp_data {
//		int   nr;                  // 0
//		__u32 arch;                // 4: AUDIT_ARCH_*
//		__u64 instruction_pointer; // 8
//		__u64 args[6];             // 16 + 8*i
//	};
//
// Loads are 32-bit and in host byte order. Both supported architectures are
// little-endian, so the low half of args[i] is at 16+8*i.
const (
	offNr   = 0
	offArch = 4
)

func offArgLow(i int) uint32 { return uint32(16 + 8*i) }

const (
	auditArchX86_64  = 0xc000003e // AUDIT_ARCH_X86_64
	auditArchAArch64 = 0xc00000b7 // AUDIT_ARCH_AARCH64

	// x32BitMask is __X32_SYSCALL_BIT: x32 syscalls arrive with
	// AUDIT_ARCH_X86_64 and this bit set in nr.
	x32BitMask = 0x40000000

	// absent marks a syscall an architecture does not have.
	absent = -1
)

// maxInstructions bounds the program we build. The kernel's limit is 4096;
// this one keeps the filter short and every forward jump within the 255 a
// conditional jump can encode.
const maxInstructions = 150

type archSpec struct {
	audit  uint32         // the only AUDIT_ARCH_* value let through
	x32    bool           // kill syscall numbers with x32BitMask set
	sysnum map[string]int // syscall numbers by name; absent where missing
}

var archInfo = map[Arch]archSpec{
	AMD64: {audit: auditArchX86_64, x32: true, sysnum: sysnumX86_64},
	ARM64: {audit: auditArchAArch64, sysnum: sysnumAArch64},
}

// Program returns the filter for arch, ready to pass to seccomp(2) as the
// instructions of a struct sock_fprog. It is pure: it builds the same
// program for a given arch and opts on any host.
//
// The program's layout, with the labels at the end shared by every check:
//
//	ld  arch;  jne AUDIT_ARCH_<native> → kill
//	ld  nr;    (amd64) jset 0x40000000 and nr != -1 → kill
//	jeq <denied nr> → eperm           one per always-denied syscall
//	jeq <nr with an argument test> → rule_k
//	ret ALLOW
//	rule_k: ld args[i]; tests → eperm / allow
//	eperm: ret ERRNO|EPERM;  enosys: ret ERRNO|ENOSYS;  kill: ret KILL_PROCESS
func Program(arch Arch, opts Options) ([]bpf.RawInstruction, error) {
	spec, ok := archInfo[arch]
	if !ok {
		return nil, fmt.Errorf("building seccomp filter: unknown architecture %q: %w", arch, ErrUnsupported)
	}
	active := make([]rule, 0, len(rules))
	for _, r := range rules {
		if r.ptrace && opts.AllowPtrace {
			continue
		}
		active = append(active, r)
	}

	var a assembler
	// 1. The ABI. Everything after this point reads nr as a native syscall
	// number, which it is only for the native audit arch.
	a.load(offArch)
	a.jumpIf(bpf.JumpNotEqual, spec.audit, "kill", "")
	a.load(offNr)
	if spec.x32 {
		// nr -1 is let through: it is not an x32 call but "no syscall"
		// (the kernel answers ENOSYS), which tracers write to skip a call
		// and which libseccomp also lets through.
		a.jumpIf(bpf.JumpBitsSet, x32BitMask, "", "dispatch")
		a.jumpIf(bpf.JumpNotEqual, 0xffffffff, "kill", "")
		a.label("dispatch")
	}

	// 2. Dispatch on nr. Each number appears once: a second appearance would
	// be dead code hiding a mistake, so it is an error.
	seen := map[int]string{}
	for i, r := range active {
		target := ruleLabel(i)
		if r.test == always {
			target = errnoLabel(r.errno)
		}
		for _, name := range r.syscalls {
			nr, ok := spec.sysnum[name]
			if !ok {
				return nil, fmt.Errorf("building seccomp filter for %s: no syscall number for %s", arch, name)
			}
			if nr == absent {
				continue
			}
			if prev, dup := seen[nr]; dup {
				return nil, fmt.Errorf("building seccomp filter for %s: %s and %s share number %d", arch, prev, name, nr)
			}
			seen[nr] = name
			a.jumpIf(bpf.JumpEqual, uint32(nr), target, "")
		}
	}
	a.ret(retAllow)

	// 3. Argument tests. Each block ends in a return, so nothing after it
	// needs nr again.
	for i, r := range active {
		if r.test == always {
			continue
		}
		deny := errnoLabel(r.errno)
		a.label(ruleLabel(i))
		a.load(offArgLow(r.arg))
		switch r.test {
		case anyOf:
			for _, v := range r.values {
				a.jumpIf(bpf.JumpEqual, v, deny, "")
			}
			a.ret(retAllow)
		case bitsSet:
			a.jumpIf(bpf.JumpBitsSet, r.values[0], deny, "")
			a.ret(retAllow)
		case noneOf:
			for _, v := range r.values {
				a.jumpIf(bpf.JumpEqual, v, "allow", "")
			}
			if p := r.unlessWith; p != nil {
				a.jumpIf(bpf.JumpNotEqual, p.value, deny, "")
				a.load(offArgLow(p.arg))
				a.jumpIf(bpf.JumpEqual, p.also, "allow", "")
			}
			a.ret(retErrno | r.errno)
		default:
			return nil, fmt.Errorf("building seccomp filter: rule for %v has unknown test %d", r.syscalls, r.test)
		}
	}

	// 4. Shared returns.
	a.label(errnoLabel(errnoEPERM))
	a.ret(retErrno | errnoEPERM)
	a.label(errnoLabel(errnoENOSYS))
	a.ret(retErrno | errnoENOSYS)
	a.label("kill")
	a.ret(retKillProcess)
	a.label("allow")
	a.ret(retAllow)

	prog, err := a.assemble()
	if err != nil {
		return nil, fmt.Errorf("building seccomp filter for %s: %w", arch, err)
	}
	return prog, nil
}

func ruleLabel(i int) string { return fmt.Sprintf("rule%d", i) }

func errnoLabel(e uint32) string { return fmt.Sprintf("errno%d", e) }

// An assembler collects BPF instructions whose jumps name labels, and
// resolves them to the relative offsets classic BPF needs. Jumps only go
// forward (BPF has no backward jumps) and must land within 255 instructions.
type assembler struct {
	ins    []bpf.Instruction
	jumps  []jumpFixup
	labels map[string]int
	err    error
}

// jumpFixup is a conditional jump waiting for its targets. An empty label
// means the next instruction.
type jumpFixup struct {
	at              int
	onTrue, onFalse string
}

func (a *assembler) load(off uint32) {
	a.ins = append(a.ins, bpf.LoadAbsolute{Off: off, Size: 4})
}

func (a *assembler) ret(v uint32) {
	a.ins = append(a.ins, bpf.RetConstant{Val: v})
}

func (a *assembler) jumpIf(cond bpf.JumpTest, val uint32, onTrue, onFalse string) {
	a.jumps = append(a.jumps, jumpFixup{at: len(a.ins), onTrue: onTrue, onFalse: onFalse})
	a.ins = append(a.ins, bpf.JumpIf{Cond: cond, Val: val})
}

func (a *assembler) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	if _, dup := a.labels[name]; dup && a.err == nil {
		a.err = fmt.Errorf("label %s defined twice", name)
	}
	a.labels[name] = len(a.ins)
}

func (a *assembler) assemble() ([]bpf.RawInstruction, error) {
	if a.err != nil {
		return nil, a.err
	}
	if len(a.ins) > maxInstructions {
		return nil, fmt.Errorf("program has %d instructions, more than %d", len(a.ins), maxInstructions)
	}
	ins := slices.Clone(a.ins)
	skip := func(from int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := a.labels[label]
		if !ok {
			return 0, fmt.Errorf("jump at %d to undefined label %s", from, label)
		}
		d := to - (from + 1)
		if d < 0 || d > 255 {
			return 0, fmt.Errorf("jump at %d to %s (at %d) is out of range", from, label, to)
		}
		return uint8(d), nil
	}
	for _, j := range a.jumps {
		t, err := skip(j.at, j.onTrue)
		if err != nil {
			return nil, err
		}
		f, err := skip(j.at, j.onFalse)
		if err != nil {
			return nil, err
		}
		ji := ins[j.at].(bpf.JumpIf)
		ji.SkipTrue, ji.SkipFalse = t, f
		ins[j.at] = ji
	}
	return bpf.Assemble(ins)
}
