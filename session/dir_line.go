package session

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strconv"
)

// A batch line carries the CRC-32C of its records array ("crc"), so that
// a line a crash wrote in part (its end on disk, not all of its middle)
// is told from a whole one without decoding every record's Data, and
// Records can read a line by its known layout instead of through
// encoding/json.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordsKey precedes a batch line's records array; the fields before it
// hold no string that could contain it (a status is JSON-escaped).
var recordsKey = []byte(`,"records":`)

// lineRecords returns the records array of a batch line that has one,
// after checking it against the line's CRC; nil for a batch of none.
func lineRecords(line []byte, n int64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	i := bytes.Index(line, recordsKey)
	if i < 0 || line[len(line)-1] != '}' {
		return nil, fmt.Errorf("a batch of %d records without them", n)
	}
	recs := line[i+len(recordsKey) : len(line)-1]
	head := line[:i]
	j := bytes.Index(head, []byte(`,"crc":`))
	if j < 0 {
		return nil, fmt.Errorf("a batch without a crc")
	}
	num := head[j+len(`,"crc":`):]
	if k := bytes.IndexByte(num, ','); k >= 0 {
		num = num[:k]
	}
	want, err := strconv.ParseUint(string(num), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("the batch's crc: %v", err)
	}
	if got := crc32.Checksum(recs, castagnoli); uint32(want) != got {
		return nil, fmt.Errorf("the records' crc is %d, the line says %d", got, want)
	}
	return recs, nil
}

// decodeBatch returns the records of a batch line with Seq at or after
// from, appended to out. It reads the layout encodeRecords writes, and
// falls back on encoding/json for a line of another layout.
func decodeBatch(line []byte, from int64, out []Record) ([]Record, error) {
	seq, n, ok := batchRange(line)
	if !ok {
		return decodeBatchJSON(line, from, out)
	}
	recs, err := lineRecords(line, n)
	if err != nil {
		return out, err
	}
	if n == 0 {
		return out, nil
	}
	mark := len(out)
	p := recs
	ok = len(p) > 1 && p[0] == '['
	p = p[1:]
	for i := int64(0); ok && i < n; i++ {
		var r Record
		if p, ok = cut(p, `{"seq":`); !ok {
			break
		}
		k := bytes.IndexByte(p, ',')
		if k < 0 {
			ok = false
			break
		}
		if r.Seq, err = strconv.ParseInt(string(p[:k]), 10, 64); err != nil || r.Seq != seq+i {
			ok = false
			break
		}
		p = p[k:]
		p, r.Base = cut(p, `,"base":true`)
		var raw []byte
		if p, ok = cut(p, `,"data":`); ok {
			k = skipValue(p)
			if ok = k > 0; ok {
				raw, p = bytes.Clone(p[:k]), p[k:]
			}
		} else if p, ok = cut(p, `,"b64":"`); ok {
			k = bytes.IndexByte(p, '"')
			if ok = k >= 0; ok {
				raw, err = base64.StdEncoding.AppendDecode(nil, p[:k])
				ok, p = err == nil, p[k+1:]
			}
		}
		if !ok {
			break
		}
		if p, ok = cut(p, "}"); !ok {
			break
		}
		if i < n-1 {
			p, ok = cut(p, ",")
		}
		if ok && r.Seq >= from {
			r.Data = raw
			out = append(out, r)
		}
	}
	if !ok || string(p) != "]" {
		return decodeBatchJSON(line, from, out[:mark])
	}
	return out, nil
}

func cut(p []byte, prefix string) ([]byte, bool) {
	if len(p) >= len(prefix) && string(p[:len(prefix)]) == prefix {
		return p[len(prefix):], true
	}
	return p, false
}

// skipValue returns the length of the JSON value p starts with, which
// is followed by '}' or ','; 0 if it does not end.
func skipValue(p []byte) int {
	depth := 0
	for i := 0; i < len(p); {
		switch p[i] {
		case '"':
			k := skipString(p[i:])
			if k < 0 {
				return 0
			}
			i += k
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of a number or literal
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return 0
}

// skipString returns the length of the JSON string p starts with, its
// quotes included, or -1 if it does not end.
func skipString(p []byte) int {
	for i := 1; ; {
		k := bytes.IndexByte(p[i:], '"')
		if k < 0 {
			return -1
		}
		k += i
		esc := 0
		for m := k - 1; m > 0 && p[m] == '\\'; m-- {
			esc++
		}
		if esc%2 == 0 {
			return k + 1
		}
		i = k + 1
	}
}

// decodeBatchJSON decodes a batch line with encoding/json.
func decodeBatchJSON(line []byte, from int64, out []Record) ([]Record, error) {
	var b dirBatch
	if err := json.Unmarshal(line, &b); err != nil {
		return out, err
	}
	if b.N != int64(len(b.Records)) {
		return out, fmt.Errorf("the batch says %d records and holds %d", b.N, len(b.Records))
	}
	if _, err := lineRecords(line, b.N); err != nil {
		return out, err
	}
	for i, r := range b.Records {
		if r.Seq != b.Seq+int64(i) || r.Data == nil && r.B64 == nil {
			return out, fmt.Errorf("record %d of the batch is not whole", i)
		}
		if r.Seq < from {
			continue
		}
		data := []byte(r.Data)
		if r.B64 != nil {
			data = r.B64
		}
		out = append(out, Record{Seq: r.Seq, Base: r.Base, Data: data})
	}
	return out, nil
}

// decodeHead decodes what a batch line changes in its session's Info,
// and checks its records against its CRC without decoding them.
func decodeHead(line []byte) (dirBatchHead, error) {
	var h dirBatchHead
	head := line
	if i := bytes.Index(line, recordsKey); i >= 0 {
		head = append(line[:i:i], '}')
	}
	if err := json.Unmarshal(head, &h); err != nil {
		return h, err
	}
	_, err := lineRecords(line, h.N)
	return h, err
}
