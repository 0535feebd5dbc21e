package netguard

import (
	"encoding/binary"
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// Offsets of the fields of struct bpf_sock_addr (include/uapi/linux/bpf.h) the programs use.
const (
	offUserIP4  = 4  // __u32 user_ip4, network byte order
	offUserIP6  = 8  // __u32 user_ip6[4], network byte order
	offUserPort = 24 // __u32 user_port, network byte order in the low 16 bits
	offProtocol = 36 // __u32 protocol (IPPROTO_TCP, IPPROTO_UDP)
)

// Verdicts of a cgroup sock_addr program.
const (
	verdictDeny  = 0 // the system call fails with EPERM
	verdictAllow = 1
)

// Labels inside the generated programs.
const (
	lblRewrite = "rewrite"
	lblPorts   = "ports"
	lblAllow   = "allow"
	lblDeny    = "deny"
)

// word is the 32-bit value a program reads from the context for four bytes in network
// order: the kernel copies the bytes, so the register holds them in host order.
func word(b []byte) int32 {
	return int32(binary.NativeEndian.Uint32(b))
}

// mappedPrefix is the third word of an IPv4-mapped IPv6 address (::ffff:a.b.c.d).
var mappedPrefix = word([]byte{0, 0, 0xff, 0xff})

// bind4 builds the BPF_CGROUP_INET4_BIND program: 0.0.0.0 becomes the instance address,
// the instance address passes, anything else is refused; then the port rules apply.
func bind4(r Rules) asm.Instructions {
	addr := word(r.Addr.AsSlice())
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R2, asm.R6, offUserIP4, asm.Word),
		asm.JEq.Imm32(asm.R2, 0, lblRewrite),
		asm.JEq.Imm32(asm.R2, addr, lblPorts),
		asm.Ja.Label(lblDeny),
		asm.Mov.Imm32(asm.R7, addr).WithSymbol(lblRewrite),
		asm.StoreMem(asm.R6, offUserIP4, asm.R7, asm.Word),
	}
	return append(insns, portChecks(r.Ports)...)
}

// bind6 builds the BPF_CGROUP_INET6_BIND program. IPv6 has no instance address: the
// wildcard (:: or ::ffff:0.0.0.0) becomes the IPv4-mapped instance address, so a
// dual-stack socket bound to [::] serves IPv4 on the instance address; the mapped
// instance address passes; every other address, ::1 included, is refused.
func bind6(r Rules) asm.Instructions {
	addr := word(r.Addr.AsSlice())
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R2, asm.R6, offUserIP6, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, offUserIP6+4, asm.Word),
		asm.LoadMem(asm.R4, asm.R6, offUserIP6+8, asm.Word),
		asm.LoadMem(asm.R5, asm.R6, offUserIP6+12, asm.Word),
		asm.JNE.Imm32(asm.R2, 0, lblDeny),
		asm.JNE.Imm32(asm.R3, 0, lblDeny),
		asm.JEq.Imm32(asm.R4, 0, "unspecified"),
		asm.JNE.Imm32(asm.R4, mappedPrefix, lblDeny),
		asm.JEq.Imm32(asm.R5, 0, lblRewrite),
		asm.JEq.Imm32(asm.R5, addr, lblPorts),
		asm.Ja.Label(lblDeny),
		asm.JEq.Imm32(asm.R5, 0, lblRewrite).WithSymbol("unspecified"),
		asm.Ja.Label(lblDeny),
		asm.Mov.Imm32(asm.R7, mappedPrefix).WithSymbol(lblRewrite),
		asm.StoreMem(asm.R6, offUserIP6+8, asm.R7, asm.Word),
		asm.Mov.Imm32(asm.R7, addr),
		asm.StoreMem(asm.R6, offUserIP6+12, asm.R7, asm.Word),
	}
	return append(insns, portChecks(r.Ports)...)
}

// portChecks is the tail both programs share, starting at lblPorts with R6 = ctx: with no
// port ranges every port passes; otherwise port 0 (an ephemeral port) and ports inside a
// range of the socket's protocol pass, and the rest are refused.
func portChecks(ranges []PortRange) asm.Instructions {
	if len(ranges) == 0 {
		return asm.Instructions{
			asm.Mov.Imm(asm.R0, verdictAllow).WithSymbol(lblPorts),
			asm.Return(),
			asm.Mov.Imm(asm.R0, verdictDeny).WithSymbol(lblDeny),
			asm.Return(),
		}
	}
	insns := asm.Instructions{
		asm.LoadMem(asm.R3, asm.R6, offUserPort, asm.Word).WithSymbol(lblPorts),
		asm.HostTo(asm.BE, asm.R3, asm.Half),
		asm.JEq.Imm32(asm.R3, 0, lblAllow),
		asm.LoadMem(asm.R4, asm.R6, offProtocol, asm.Word),
	}
	for i, pr := range ranges {
		next := fmt.Sprintf("range%d", i+1)
		insns = append(insns, rangeMatch(pr, asm.R3, asm.R4, next)...)
		insns = append(insns,
			asm.Ja.Label(lblAllow),
			asm.Mov.Imm(asm.R0, verdictDeny).WithSymbol(next),
		)
	}
	return append(insns,
		asm.Return(),
		asm.Mov.Imm(asm.R0, verdictAllow).WithSymbol(lblAllow),
		asm.Return(),
		asm.Mov.Imm(asm.R0, verdictDeny).WithSymbol(lblDeny),
		asm.Return(),
	)
}

// rangeMatch jumps to next unless the port in register port (host order) lies in pr and the
// protocol in register proto is pr's.
func rangeMatch(pr PortRange, port, proto asm.Register, next string) asm.Instructions {
	var insns asm.Instructions
	if pr.Protocol != AnyProtocol {
		insns = append(insns, asm.JNE.Imm32(proto, int32(pr.Protocol), next))
	}
	return append(insns,
		asm.JLT.Imm32(port, int32(pr.From), next),
		asm.JGT.Imm32(port, int32(pr.To), next),
	)
}

// connect4 builds the BPF_CGROUP_INET4_CONNECT program: a socket that connects to a
// loopback address (127.0.0.0/8) and is not bound yet is first bound to the instance
// address (bpf_bind, port 0), so the connection leaves from the instance's address rather
// than from the server's 127.0.0.1. A socket already bound keeps its address (bpf_bind
// fails, and the connection goes on). Other destinations are left to the kernel's routing.
func connect4(r Rules) asm.Instructions {
	var family [4]byte
	binary.NativeEndian.PutUint16(family[:2], afInet)
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R2, asm.R6, offUserIP4, asm.Word),
		asm.And.Imm32(asm.R2, word([]byte{0xff, 0, 0, 0})),
		asm.JNE.Imm32(asm.R2, word([]byte{127, 0, 0, 0}), lblAllow),
		// struct sockaddr_in on the stack: family, port 0, the instance address, zeros.
		asm.StoreImm(asm.R10, -16, int64(word(family[:])), asm.Word),
		asm.StoreImm(asm.R10, -12, int64(word(r.Addr.AsSlice())), asm.Word),
		asm.StoreImm(asm.R10, -8, 0, asm.Word),
		asm.StoreImm(asm.R10, -4, 0, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, -16),
		asm.Mov.Imm(asm.R3, 16),
		asm.FnBind.Call(),
		asm.Mov.Imm(asm.R0, verdictAllow).WithSymbol(lblAllow),
		asm.Return(),
	}
}
