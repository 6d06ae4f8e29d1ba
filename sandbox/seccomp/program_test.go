package seccomp

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current programs")

// Numbers of a few allowed syscalls, for the verdict tables. The denied ones
// come from the package's own tables.
var allowedNr = map[Arch]map[string]uint32{
	AMD64: {"read": 0, "getpid": 39, "socketpair": 53, "openat": 257, "personality": 135},
	ARM64: {"read": 63, "getpid": 172, "socketpair": 199, "openat": 56, "personality": 92},
}

// nr returns the number of a syscall on arch, from the denylist table or
// allowedNr.
func nr(t *testing.T, arch Arch, name string) uint32 {
	t.Helper()
	if n, ok := allowedNr[arch][name]; ok {
		return n
	}
	n, ok := archInfo[arch].sysnum[name]
	if !ok || n == absent {
		t.Fatalf("no number for %s on %s", name, arch)
	}
	return uint32(n)
}

// seccompData serializes a struct seccomp_data for bpf.VM.
//
// The kernel loads 32-bit words in host order (little-endian on amd64 and
// arm64), but bpf.VM loads them in network order, as for packets. Writing
// each 32-bit field big-endian at its little-endian place makes the VM read
// the values the kernel would, given that the program only makes aligned
// 32-bit loads (TestProgramShape checks that): the low half of args[i] sits
// at 16+8*i, the high half at 20+8*i.
func seccompData(nr, arch uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], arch)
	binary.BigEndian.PutUint32(b[8:], 0x1000) // instruction_pointer, low
	for i, a := range args {
		binary.BigEndian.PutUint32(b[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[20+8*i:], uint32(a>>32))
	}
	return b
}

// vm builds a bpf.VM from the raw program, so the test runs what Install
// would hand to the kernel, not the assembler's input.
func vm(t *testing.T, arch Arch, opts Options) *bpf.VM {
	t.Helper()
	raw, err := Program(arch, opts)
	if err != nil {
		t.Fatal(err)
	}
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("program does not disassemble completely")
	}
	v, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func verdict(t *testing.T, v *bpf.VM, pkt []byte) uint32 {
	t.Helper()
	out, err := v.Run(pkt)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(out)
}

func verdictName(v uint32) string {
	switch {
	case v == retAllow:
		return "ALLOW"
	case v == retKillProcess:
		return "KILL_PROCESS"
	case v&0xffff0000 == retErrno:
		return "ERRNO(" + errnoName(v&0xffff) + ")"
	}
	return fmt.Sprintf("%#x", v)
}

const (
	allow  = retAllow
	kill   = retKillProcess
	eperm  = retErrno | errnoEPERM
	enosys = retErrno | errnoENOSYS

	auditArchI386 = 0x40000003 // AUDIT_ARCH_I386
	auditArchARM  = 0x40000028 // AUDIT_ARCH_ARM (AArch32)

	tcgets       = 0x5401
	sigchld      = 17
	cloneNewNS   = 0x00020000
	addrNoRandom = 0x0040000
	perLinux32   = 0x0008
	clonePlain   = 0x01200011 // CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD, as fork() does
	highBits     = 0xffffffff00000000
)

func TestProgramVerdicts(t *testing.T) {
	t.Parallel()
	type call struct {
		name string
		args []uint64
	}
	type tc struct {
		desc  string
		call  call
		opts  Options
		arch  uint32 // 0: the native audit arch
		nrOr  uint32 // or'ed into nr
		nrRaw *uint32
		want  uint32
	}
	minusOne := uint32(0xffffffff)
	common := []tc{
		{desc: "socket AF_UNIX", call: call{"socket", []uint64{afUnix, 1, 0}}, want: eperm},
		{desc: "socket AF_UNIX high bits ignored by the kernel", call: call{"socket", []uint64{highBits | afUnix, 1, 0}}, want: eperm},
		{desc: "socket AF_INET", call: call{"socket", []uint64{afInet, 1, 0}}, want: allow},
		{desc: "socket AF_INET6", call: call{"socket", []uint64{afInet6, 2, 0}}, want: allow},
		{desc: "socket AF_INET6 high bits ignored by the kernel", call: call{"socket", []uint64{highBits | afInet6, 2, 0}}, want: allow},
		{desc: "socket AF_NETLINK NETLINK_ROUTE", call: call{"socket", []uint64{16, 3, 0}}, want: allow},
		{desc: "socket AF_NETLINK NETLINK_KOBJECT_UEVENT", call: call{"socket", []uint64{16, 3, 15}}, want: eperm},
		{desc: "socket AF_NETLINK NETLINK_AUDIT", call: call{"socket", []uint64{16, 3, 9}}, want: eperm},
		{desc: "socket AF_NETLINK protocol high bits ignored by the kernel", call: call{"socket", []uint64{16, 3, highBits | 15}}, want: eperm},
		{desc: "socket AF_INET with protocol 15", call: call{"socket", []uint64{afInet, 1, 15}}, want: allow},
		{desc: "socket AF_PACKET", call: call{"socket", []uint64{17, 3, 0}}, want: eperm},
		{desc: "socket AF_VSOCK", call: call{"socket", []uint64{40, 1, 0}}, want: eperm},
		{desc: "socket AF_ALG", call: call{"socket", []uint64{38, 5, 0}}, want: eperm},
		{desc: "socket AF_UNSPEC", call: call{"socket", []uint64{0, 1, 0}}, want: eperm},
		{desc: "socketpair AF_UNIX", call: call{"socketpair", []uint64{afUnix, 1, 0, 0}}, want: allow},
		{desc: "read", call: call{"read", []uint64{0, 0, 0}}, want: allow},
		{desc: "openat", call: call{"openat", []uint64{0, 0, 0}}, want: allow},
		{desc: "io_uring_setup", call: call{"io_uring_setup", nil}, want: eperm},
		{desc: "io_uring_enter", call: call{"io_uring_enter", nil}, want: eperm},
		{desc: "io_uring_register", call: call{"io_uring_register", nil}, want: eperm},
		{desc: "bpf", call: call{"bpf", nil}, want: eperm},
		{desc: "userfaultfd", call: call{"userfaultfd", nil}, want: eperm},
		{desc: "keyctl", call: call{"keyctl", nil}, want: eperm},
		{desc: "add_key", call: call{"add_key", nil}, want: eperm},
		{desc: "request_key", call: call{"request_key", nil}, want: eperm},
		{desc: "perf_event_open", call: call{"perf_event_open", nil}, want: eperm},
		{desc: "finit_module", call: call{"finit_module", nil}, want: eperm},
		{desc: "kexec_file_load", call: call{"kexec_file_load", nil}, want: eperm},
		{desc: "ioctl TIOCSTI", call: call{"ioctl", []uint64{0, tiocsti, 0}}, want: eperm},
		{desc: "ioctl TIOCSTI high bits", call: call{"ioctl", []uint64{0, highBits | tiocsti, 0}}, want: eperm},
		{desc: "ioctl TIOCLINUX", call: call{"ioctl", []uint64{0, tioclinux, 0}}, want: eperm},
		{desc: "ioctl TCGETS", call: call{"ioctl", []uint64{0, tcgets, 0}}, want: allow},
		{desc: "ioctl fd equal to TIOCSTI", call: call{"ioctl", []uint64{tiocsti, tcgets, 0}}, want: allow},
		{desc: "clone CLONE_NEWUSER", call: call{"clone", []uint64{cloneNewUser | sigchld}}, want: eperm},
		{desc: "clone fork-like", call: call{"clone", []uint64{clonePlain}}, want: allow},
		{desc: "clone CLONE_NEWNS", call: call{"clone", []uint64{cloneNewNS | sigchld}}, want: allow},
		{desc: "unshare CLONE_NEWUSER", call: call{"unshare", []uint64{cloneNewUser}}, want: eperm},
		{desc: "unshare CLONE_NEWUSER|CLONE_NEWNS", call: call{"unshare", []uint64{cloneNewUser | cloneNewNS}}, want: eperm},
		{desc: "unshare CLONE_NEWNS", call: call{"unshare", []uint64{cloneNewNS}}, want: allow},
		{desc: "clone3", call: call{"clone3", []uint64{0, 88}}, want: enosys},
		{desc: "setns", call: call{"setns", nil}, want: eperm},
		{desc: "mount", call: call{"mount", nil}, want: eperm},
		{desc: "umount2", call: call{"umount2", nil}, want: eperm},
		{desc: "fsopen", call: call{"fsopen", nil}, want: eperm},
		{desc: "open_tree_attr", call: call{"open_tree_attr", nil}, want: eperm},
		{desc: "mount_setattr", call: call{"mount_setattr", nil}, want: eperm},
		{desc: "open_by_handle_at", call: call{"open_by_handle_at", nil}, want: eperm},
		{desc: "reboot", call: call{"reboot", nil}, want: eperm},
		{desc: "syslog", call: call{"syslog", nil}, want: eperm},
		{desc: "clock_settime", call: call{"clock_settime", nil}, want: eperm},
		{desc: "personality query", call: call{"personality", []uint64{perQuery}}, want: allow},
		{desc: "personality PER_LINUX", call: call{"personality", []uint64{perLinux}}, want: allow},
		{desc: "personality ADDR_NO_RANDOMIZE", call: call{"personality", []uint64{addrNoRandom}}, want: eperm},
		{desc: "personality PER_LINUX32", call: call{"personality", []uint64{perLinux32}}, want: eperm},
		{desc: "ptrace", call: call{"ptrace", nil}, want: eperm},
		{desc: "process_vm_readv", call: call{"process_vm_readv", nil}, want: eperm},
		{desc: "process_vm_writev", call: call{"process_vm_writev", nil}, want: eperm},
		{desc: "pidfd_getfd", call: call{"pidfd_getfd", nil}, want: eperm},
		{desc: "ptrace allowed", call: call{"ptrace", nil}, opts: Options{AllowPtrace: true}, want: allow},
		{desc: "process_vm_writev allowed", call: call{"process_vm_writev", nil}, opts: Options{AllowPtrace: true}, want: allow},
		{desc: "pidfd_getfd allowed", call: call{"pidfd_getfd", nil}, opts: Options{AllowPtrace: true}, want: allow},
		{desc: "AllowPtrace keeps socket AF_UNIX denied", call: call{"socket", []uint64{afUnix}}, opts: Options{AllowPtrace: true}, want: eperm},
		{desc: "AllowPtrace keeps bpf denied", call: call{"bpf", nil}, opts: Options{AllowPtrace: true}, want: eperm},
	}
	perArch := map[Arch][]tc{
		AMD64: {
			{desc: "i386 via int 0x80", call: call{"getpid", nil}, arch: auditArchI386, want: kill},
			{desc: "i386 number of a harmless call", nrRaw: ptr(20), arch: auditArchI386, want: kill},
			{desc: "aarch64 audit arch", call: call{"getpid", nil}, arch: auditArchAArch64, want: kill},
			{desc: "x32 getpid", call: call{"getpid", nil}, nrOr: x32BitMask, want: kill},
			{desc: "x32 socket AF_INET", call: call{"socket", []uint64{afInet}}, nrOr: x32BitMask, want: kill},
			{desc: "nr -1 (no syscall)", nrRaw: &minusOne, want: allow},
			{desc: "nr 0x7fffffff", nrRaw: ptr(0x7fffffff), want: kill},
			{desc: "nr 0x80000000 (no x32 bit)", nrRaw: ptr(0x80000000), want: allow},
			{desc: "iopl", call: call{"iopl", nil}, want: eperm},
			{desc: "ioperm", call: call{"ioperm", nil}, want: eperm},
			{desc: "uselib", call: call{"uselib", nil}, want: eperm},
		},
		ARM64: {
			{desc: "AArch32 compat", call: call{"getpid", nil}, arch: auditArchARM, want: kill},
			{desc: "x86-64 audit arch", call: call{"getpid", nil}, arch: auditArchX86_64, want: kill},
			// arm64 has no x32: the bit is just an unknown number.
			{desc: "x32 bit is not special", call: call{"getpid", nil}, nrOr: x32BitMask, want: allow},
		},
	}
	for _, arch := range Arches() {
		for _, c := range append(slices.Clone(common), perArch[arch]...) {
			t.Run(fmt.Sprintf("%s/%s", arch, c.desc), func(t *testing.T) {
				t.Parallel()
				var n uint32
				if c.nrRaw != nil {
					n = *c.nrRaw
				} else {
					n = nr(t, arch, c.call.name) | c.nrOr
				}
				auditArch := c.arch
				if auditArch == 0 {
					auditArch = archInfo[arch].audit
				}
				got := verdict(t, vm(t, arch, c.opts), seccompData(n, auditArch, c.call.args...))
				if got != c.want {
					t.Errorf("got %s, want %s", verdictName(got), verdictName(c.want))
				}
			})
		}
	}
}

func ptr(v uint32) *uint32 { return &v }

// TestOnlyListedSyscallsDenied sweeps every syscall number with arguments
// that pass all argument tests and checks that exactly the always-denied
// syscalls are refused: nothing is denied by accident, nothing listed is
// missed.
func TestOnlyListedSyscallsDenied(t *testing.T) {
	t.Parallel()
	for _, arch := range Arches() {
		for _, opts := range []Options{{}, {AllowPtrace: true}} {
			t.Run(fmt.Sprintf("%s/%+v", arch, opts), func(t *testing.T) {
				t.Parallel()
				want := map[uint32]uint32{}
				for _, r := range rules {
					if r.test != always || (r.ptrace && opts.AllowPtrace) {
						continue
					}
					for _, name := range r.syscalls {
						if n := archInfo[arch].sysnum[name]; n != absent {
							want[uint32(n)] = retErrno | r.errno
						}
					}
				}
				v := vm(t, arch, opts)
				// Argument 0 passes every other argument test: it has no
				// CLONE_NEWUSER and is PER_LINUX; and args[1] = 0 is not
				// TIOCSTI. socket is given AF_INET.
				socket := uint32(archInfo[arch].sysnum["socket"])
				for n := range uint32(1024) {
					w, ok := want[n]
					if !ok {
						w = allow
					}
					var arg0 uint64
					if n == socket {
						arg0 = afInet
					}
					if got := verdict(t, v, seccompData(n, archInfo[arch].audit, arg0)); got != w {
						t.Errorf("nr %d: got %s, want %s", n, verdictName(got), verdictName(w))
					}
				}
			})
		}
	}
}

// TestProgramShape checks the properties the kernel and the tests rely on.
func TestProgramShape(t *testing.T) {
	t.Parallel()
	for _, arch := range Arches() {
		for _, opts := range []Options{{}, {AllowPtrace: true}} {
			raw, err := Program(arch, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %+v: %d instructions", arch, opts, len(raw))
			if len(raw) > maxInstructions {
				t.Errorf("%s: %d instructions, want at most %d", arch, len(raw), maxInstructions)
			}
			ins, ok := bpf.Disassemble(raw)
			if !ok {
				t.Fatalf("%s: program does not disassemble", arch)
			}
			// The arch check comes first, before nr is even loaded.
			if got, want := ins[0], (bpf.LoadAbsolute{Off: offArch, Size: 4}); got != want {
				t.Errorf("%s: instruction 0 is %v, want %v", arch, got, want)
			}
			if j, ok := ins[1].(bpf.JumpIf); !ok || j.Val != archInfo[arch].audit {
				t.Errorf("%s: instruction 1 is %v, want a test of the audit arch", arch, ins[1])
			}
			if j := ins[1].(bpf.JumpIf); !isKill(ins, 1, j) {
				t.Errorf("%s: a foreign audit arch does not reach KILL_PROCESS", arch)
			}
			for i, in := range ins {
				switch in := in.(type) {
				case bpf.LoadAbsolute:
					if in.Size != 4 || in.Off%4 != 0 || in.Off >= 64 {
						t.Errorf("%s: instruction %d: %v is not an aligned word load inside seccomp_data", arch, i, in)
					}
				case bpf.JumpIf, bpf.RetConstant:
				default:
					t.Errorf("%s: instruction %d: unexpected %T", arch, i, in)
				}
			}
			if _, ok := ins[len(ins)-1].(bpf.RetConstant); !ok {
				t.Errorf("%s: last instruction is not a return", arch)
			}
		}
	}
}

// isKill reports whether the foreign-arch branch of jump j at index i lands
// on ret KILL_PROCESS.
func isKill(ins []bpf.Instruction, i int, j bpf.JumpIf) bool {
	skip := j.SkipFalse
	if j.Cond == bpf.JumpNotEqual {
		skip = j.SkipTrue
	}
	r, ok := ins[i+1+int(skip)].(bpf.RetConstant)
	return ok && r.Val == retKillProcess
}

func TestProgramErrors(t *testing.T) {
	t.Parallel()
	if _, err := Program("riscv64", Options{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Program(riscv64): got %v, want ErrUnsupported", err)
	}
	if _, err := Program("", Options{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Program(\"\"): got %v, want ErrUnsupported", err)
	}
}

// TestTables checks that every arch table names exactly the syscalls the
// rules list, and that no syscall number is shared or listed twice.
func TestTables(t *testing.T) {
	t.Parallel()
	var names []string
	for _, r := range rules {
		names = append(names, r.syscalls...)
	}
	sorted := slices.Sorted(slices.Values(names))
	if c := slices.Compact(slices.Clone(sorted)); len(c) != len(sorted) {
		t.Errorf("a syscall appears in two rules: %v", sorted)
	}
	for _, arch := range Arches() {
		tab := archInfo[arch].sysnum
		for _, n := range names {
			if _, ok := tab[n]; !ok {
				t.Errorf("%s: table lacks %s", arch, n)
			}
		}
		byNr := map[int]string{}
		for name, n := range tab {
			if !slices.Contains(names, name) {
				t.Errorf("%s: table has %s, which no rule uses", arch, name)
			}
			if n == absent {
				continue
			}
			if prev, dup := byNr[n]; dup {
				t.Errorf("%s: %s and %s share number %d", arch, prev, name, n)
			}
			byNr[n] = name
		}
	}
}

func TestNativeArch(t *testing.T) {
	t.Parallel()
	a, err := NativeArch()
	switch {
	case err == nil:
		if !slices.Contains(Arches(), a) {
			t.Errorf("NativeArch() = %q, not in Arches()", a)
		}
	case !errors.Is(err, ErrUnsupported):
		t.Errorf("NativeArch(): got %v, want nil or ErrUnsupported", err)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	def := Describe(Options{})
	if !strings.Contains(def[0], "non-native ABI") {
		t.Errorf("first line %q does not describe the ABI check", def[0])
	}
	for _, want := range []string{
		"socket unless args[0] is AF_INET or AF_INET6, or AF_NETLINK with args[2] NETLINK_ROUTE: EPERM",
		"clone, unshare when args[0] has CLONE_NEWUSER: EPERM",
		"clone3: ENOSYS",
		"ioctl when args[1] is TIOCSTI or TIOCLINUX: EPERM",
		"ptrace, process_vm_readv, process_vm_writev, pidfd_getfd: EPERM",
		"personality unless args[0] is PER_LINUX",
	} {
		if !slices.ContainsFunc(def, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("Describe lacks a line starting %q", want)
		}
	}
	for _, l := range Describe(Options{AllowPtrace: true}) {
		if strings.HasPrefix(l, "ptrace") {
			t.Errorf("Describe(AllowPtrace) still lists %q", l)
		}
	}
	if got, want := len(def)-len(Describe(Options{AllowPtrace: true})), 1; got != want {
		t.Errorf("AllowPtrace removed %d lines, want %d", got, want)
	}
	if d := deniedSyscalls(Options{}); !slices.Contains(d, "ptrace") || slices.Contains(deniedSyscalls(Options{AllowPtrace: true}), "ptrace") {
		t.Errorf("deniedSyscalls does not follow AllowPtrace: %v", d)
	}
}

// TestGolden keeps an annotated listing of each program in testdata, so a
// change to the filter shows up in review as a readable diff. Run
// `go test -run TestGolden -update` after an intended change.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, arch := range Arches() {
		t.Run(string(arch), func(t *testing.T) {
			t.Parallel()
			raw, err := Program(arch, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := listing(arch, raw)
			path := filepath.Join("testdata", string(arch)+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("program for %s differs from %s (rerun with -update if intended):\n%s", arch, path, got)
			}
		})
	}
}

// listing disassembles raw with absolute jump targets and notes naming
// loads, syscalls and return values.
func listing(arch Arch, raw []bpf.RawInstruction) string {
	names := map[uint32]string{}
	for name, n := range archInfo[arch].sysnum {
		if n != absent {
			names[uint32(n)] = name
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# seccomp filter for %s, default options: %d instructions\n", arch, len(raw))
	var loaded uint32
	for i, r := range raw {
		in := r.Disassemble()
		var text, note string
		switch in := in.(type) {
		case bpf.LoadAbsolute:
			loaded = in.Off
			text = fmt.Sprintf("ld [%d]", in.Off)
			switch {
			case in.Off == offNr:
				note = "nr"
			case in.Off == offArch:
				note = "arch"
			default:
				note = fmt.Sprintf("args[%d] low 32 bits", (in.Off-16)/8)
			}
		case bpf.JumpIf:
			op := map[bpf.JumpTest]string{bpf.JumpEqual: "jeq", bpf.JumpNotEqual: "jne", bpf.JumpBitsSet: "jset", bpf.JumpBitsNotSet: "jnset"}[in.Cond]
			val := fmt.Sprintf("%#x", in.Val)
			if loaded == offNr {
				val = fmt.Sprint(in.Val) // syscall numbers read best in decimal
				note = names[in.Val]
			}
			text = fmt.Sprintf("%s %s, %d, %d", op, val, i+1+int(in.SkipTrue), i+1+int(in.SkipFalse))
		case bpf.RetConstant:
			text = "ret " + verdictName(in.Val)
		default:
			text = in.(fmt.Stringer).String()
		}
		if note != "" {
			fmt.Fprintf(&b, "%3d  %-36s ; %s\n", i, text, note)
		} else {
			fmt.Fprintf(&b, "%3d  %s\n", i, text)
		}
	}
	return b.String()
}

// deniedSyscalls returns the names of every syscall some rule matches under
// opts, sorted.
func deniedSyscalls(opts Options) []string {
	var names []string
	for _, r := range rules {
		if r.ptrace && opts.AllowPtrace {
			continue
		}
		names = append(names, r.syscalls...)
	}
	slices.Sort(names)
	return names
}
