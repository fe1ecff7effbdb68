package unwind

import "fmt"

// ehFrameHdr is the contents of .eh_frame_hdr (the PT_GNU_EH_FRAME
// segment): where .eh_frame starts and the linker's table of FDEs sorted by
// the address of the code they cover.
type ehFrameHdr struct {
	ehFrame uint64     // link-time address of .eh_frame
	table   []hdrEntry // sorted by start; nil when the linker wrote none
}

// hdrEntry is one row of the .eh_frame_hdr search table.
type hdrEntry struct {
	start uint64 // link-time address of the first instruction the FDE covers
	fde   uint64 // link-time address of the FDE
}

// parseEHFrameHdr parses the .eh_frame_hdr data linked at addr.
func parseEHFrameHdr(data []byte, addr uint64) (ehFrameHdr, error) {
	r := reader{b: data, addr: addr}
	version := r.u8()
	ptrEnc, countEnc, tableEnc := r.u8(), r.u8(), r.u8()
	if r.err != nil {
		return ehFrameHdr{}, fmt.Errorf(".eh_frame_hdr: %w", r.err)
	}
	if version != 1 {
		return ehFrameHdr{}, fmt.Errorf(".eh_frame_hdr: version %d", version)
	}
	for _, enc := range []byte{ptrEnc, countEnc, tableEnc} {
		if enc != peOmit && enc&peIndirect != 0 {
			return ehFrameHdr{}, fmt.Errorf(".eh_frame_hdr: indirect encoding %#x", enc)
		}
	}
	b := bases{data: addr}
	h := ehFrameHdr{ehFrame: r.pointer(ptrEnc, b)}
	if countEnc == peOmit || tableEnc == peOmit {
		return h, r.err
	}
	n := r.pointer(countEnc, b)
	if r.err != nil {
		return ehFrameHdr{}, fmt.Errorf(".eh_frame_hdr: %w", r.err)
	}
	if n > uint64(len(data)) { // every row takes at least two bytes
		return ehFrameHdr{}, fmt.Errorf(".eh_frame_hdr: %d table rows in %d bytes: %w", n, len(data), errShort)
	}
	h.table = make([]hdrEntry, 0, n)
	for range n {
		h.table = append(h.table, hdrEntry{start: r.pointer(tableEnc, b), fde: r.pointer(tableEnc, b)})
	}
	if r.err != nil {
		return ehFrameHdr{}, fmt.Errorf(".eh_frame_hdr table: %w", r.err)
	}
	return h, nil
}
