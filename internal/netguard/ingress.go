package netguard

import (
	"fmt"
	"net/netip"

	"github.com/cilium/ebpf/asm"
)

// Offsets of the fields of struct __sk_buff (include/uapi/linux/bpf.h) the ingress program
// uses. family to remote_port describe the receiving socket, not the packet.
const (
	offData       = 76
	offDataEnd    = 80
	offFamily     = 88
	offLocalIP4   = 96
	offLocalIP6   = 116
	offRemotePort = 132
)

// Socket families.
const (
	afInet  = 2
	afInet6 = 10
)

const lblListener = "listener"

// ingress builds the BPF_CGROUP_INET_INGRESS program, which sees every packet delivered to
// a socket of the cgroup. A connected socket (TCP connections, connect()ed UDP) gets its
// packets. A socket that is not connected (a listener, an unconnected UDP socket) gets them
// only when it is bound to the instance address: listen() or sendto() on a socket that was
// never bound binds the wildcard without running the bind hook, and this closes that gap.
// With r.EnforceInbound, such packets must also match an inbound permission.
func ingress(r Rules) asm.Instructions {
	addr := word(r.Addr.AsSlice())
	insns := socketChecks(addr)
	if r.EnforceInbound {
		insns = append(insns, packetHeaders(addr)...)
		insns = append(insns, permissionChecks(r.Inbound)...)
		insns = append(insns, asm.Return())
	} else {
		insns = append(insns, asm.Mov.Imm(asm.R0, verdictAllow).WithSymbol(lblListener), asm.Return())
	}
	return append(insns,
		asm.Mov.Imm(asm.R0, verdictAllow).WithSymbol(lblAllow),
		asm.Return(),
		asm.Mov.Imm(asm.R0, verdictDeny).WithSymbol(lblDeny),
		asm.Return(),
	)
}

// socketChecks looks at the receiving socket (R6 = ctx): connected, to lblAllow; bound to
// the instance address (IPv4, or IPv4-mapped IPv6), on to lblListener; else to lblDeny.
func socketChecks(addr int32) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R2, asm.R6, offFamily, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, offRemotePort, asm.Word),
		asm.JNE.Imm32(asm.R3, 0, lblAllow),
		asm.JEq.Imm32(asm.R2, afInet6, "local6"),
		asm.JNE.Imm32(asm.R2, afInet, lblDeny),
		asm.LoadMem(asm.R4, asm.R6, offLocalIP4, asm.Word),
		asm.JEq.Imm32(asm.R4, addr, lblListener),
		asm.Ja.Label(lblDeny),
		asm.LoadMem(asm.R4, asm.R6, offLocalIP6, asm.Word).WithSymbol("local6"),
		asm.JNE.Imm32(asm.R4, 0, lblDeny),
		asm.LoadMem(asm.R4, asm.R6, offLocalIP6+4, asm.Word),
		asm.JNE.Imm32(asm.R4, 0, lblDeny),
		asm.LoadMem(asm.R4, asm.R6, offLocalIP6+8, asm.Word),
		asm.JNE.Imm32(asm.R4, mappedPrefix, lblDeny),
		asm.LoadMem(asm.R4, asm.R6, offLocalIP6+12, asm.Word),
		asm.JNE.Imm32(asm.R4, addr, lblDeny),
	}
}

// packetHeaders starts at lblListener and reads the IPv4 packet (a socket on the instance
// address only gets IPv4): R9 = source address, R5 = IP protocol, R3 = destination port in
// host order. A packet from the instance address itself passes: that traffic stays inside
// the instance. A packet too short to read is dropped.
func packetHeaders(addr int32) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R7, asm.R6, offData, asm.Word).WithSymbol(lblListener),
		asm.LoadMem(asm.R8, asm.R6, offDataEnd, asm.Word),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Imm(asm.R2, 20),
		asm.JGT.Reg(asm.R2, asm.R8, lblDeny),
		asm.LoadMem(asm.R4, asm.R7, 0, asm.Byte),
		asm.Mov.Reg(asm.R5, asm.R4),
		asm.RSh.Imm(asm.R5, 4),
		asm.JNE.Imm(asm.R5, 4, lblDeny),
		asm.And.Imm(asm.R4, 0xf),
		asm.LSh.Imm(asm.R4, 2),
		asm.LoadMem(asm.R9, asm.R7, 12, asm.Word),
		asm.JEq.Imm32(asm.R9, addr, lblAllow),
		asm.LoadMem(asm.R5, asm.R7, 9, asm.Byte),
		asm.Add.Reg(asm.R7, asm.R4),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Imm(asm.R2, 4),
		asm.JGT.Reg(asm.R2, asm.R8, lblDeny),
		asm.LoadMem(asm.R3, asm.R7, 2, asm.Half),
		asm.HostTo(asm.BE, asm.R3, asm.Half),
	}
}

// permissionChecks allows the packet when one permission covers its protocol (R5),
// destination port (R3) and source address (R9), and leaves R0 = deny otherwise.
func permissionChecks(perms []Permission) asm.Instructions {
	insns := asm.Instructions{asm.Mov.Imm(asm.R0, verdictDeny)}
	for i, p := range perms {
		next := fmt.Sprintf("permission%d", i+1)
		mask, network := prefixWords(p.Source)
		insns = append(insns, rangeMatch(p.Ports, asm.R3, asm.R5, next)...)
		insns = append(insns,
			asm.Mov.Reg(asm.R2, asm.R9),
			asm.And.Imm32(asm.R2, mask),
			asm.JNE.Imm32(asm.R2, network, next),
			asm.Ja.Label(lblAllow),
			asm.Mov.Imm(asm.R0, verdictDeny).WithSymbol(next),
		)
	}
	return insns
}

// prefixWords returns an IPv4 prefix's mask and network as the program compares them.
func prefixWords(p netip.Prefix) (mask, network int32) {
	var m [4]byte
	for i := range p.Bits() {
		m[i/8] |= 0x80 >> (i % 8)
	}
	return word(m[:]), word(p.Masked().Addr().AsSlice())
}
