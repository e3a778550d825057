package state

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Builders for test states: synthetic but shaped like what Terraform writes
// (MarshalIndent with two spaces, resources with instances and attributes).

const testSuffix = "0123456789abcdef-m"

type genOptions struct {
	// size is the approximate size of the JSON to generate.
	size int
	// privateBytes is the size of each instance's opaque "private" blob;
	// random bytes compress badly, so it steers the compression ratio.
	privateBytes int
}

type genInstance struct {
	IndexKey            int            `json:"index_key"`
	SchemaVersion       int            `json:"schema_version"`
	Attributes          map[string]any `json:"attributes"`
	SensitiveAttributes []any          `json:"sensitive_attributes"`
	Private             string         `json:"private"`
	Dependencies        []string       `json:"dependencies"`
}

// genDoc keeps the member order Terraform writes.
type genDoc struct {
	Version          int            `json:"version"`
	TerraformVersion string         `json:"terraform_version"`
	Serial           int64          `json:"serial"`
	Lineage          string         `json:"lineage"`
	Outputs          map[string]any `json:"outputs"`
	Resources        []genResource  `json:"resources"`
	CheckResults     any            `json:"check_results"`
}

type genResource struct {
	Mode      string        `json:"mode"`
	Type      string        `json:"type"`
	Name      string        `json:"name"`
	Provider  string        `json:"provider"`
	Instances []genInstance `json:"instances"`
}

// genState returns a version 4 state of about opts.size bytes, and how many
// managed resources it holds. Every tenth resource is a data source.
func genState(tb testing.TB, opts genOptions) (state []byte, managed int) {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	hex := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "0123456789abcdef"[r.IntN(16)]
		}
		return string(b)
	}
	private := make([]byte, opts.privateBytes)
	var resources []genResource
	for size := 0; size < opts.size; {
		i := len(resources)
		for j := range private {
			private[j] = byte(r.UintN(256))
		}
		ip := fmt.Sprintf("10.%d.%d.%d", r.IntN(256), r.IntN(256), r.IntN(256))
		res := genResource{
			Mode: "managed", Type: "aws_instance", Name: "node",
			Provider: `provider["registry.terraform.io/hashicorp/aws"]`,
			Instances: []genInstance{{
				IndexKey: i, SchemaVersion: 1,
				Attributes: map[string]any{
					"id": "i-" + hex(17), "ami": "ami-" + hex(17),
					"arn":           "arn:aws:ec2:eu-west-1:123456789012:instance/i-" + hex(17),
					"instance_type": "m5.large", "private_ip": ip,
					"private_dns":       "ip-" + ip + ".eu-west-1.compute.internal",
					"availability_zone": "eu-west-1a", "subnet_id": "subnet-" + hex(17),
					"vpc_security_group_ids": []string{"sg-" + hex(17), "sg-" + hex(17)},
					"tags":                   map[string]string{"Name": "node-" + strconv.Itoa(i), "cluster": "prod"},
					"root_block_device": []map[string]any{{
						"delete_on_termination": true, "device_name": "/dev/xvda", "iops": 3000,
						"volume_id": "vol-" + hex(17), "volume_size": 50, "volume_type": "gp3",
					}},
					"user_data": nil, "monitoring": false, "ebs_optimized": true,
					"metadata_options": []map[string]any{{"http_tokens": "required", "http_put_response_hop_limit": 2}},
					"user_data_base64": "I2Nsb3VkLWNvbmZpZwpwYWNrYWdlczpcbiAgLSBjdXJsXG4=", "cpu_core_count": 1.5e0,
				},
				SensitiveAttributes: []any{},
				Private:             base64.StdEncoding.EncodeToString(private),
				Dependencies:        []string{"aws_subnet.main", "aws_security_group.nodes"},
			}},
		}
		if i%10 == 9 {
			res.Mode = "data"
		} else {
			managed++
		}
		resources = append(resources, res)
		size += 2200 + opts.privateBytes*4/3
	}
	doc := genDoc{
		Version: 4, TerraformVersion: "1.8.5", Serial: 42,
		Lineage: "5a1d0c39-7f3e-4c2a-9d6b-1e2f3a4b5c6d",
		Outputs: map[string]any{
			"endpoint":   map[string]any{"value": map[string]any{"host": "10.0.0.1", "port": 6443}, "type": []any{"object", map[string]string{"host": "string", "port": "number"}}},
			"kubeconfig": map[string]any{"value": "apiVersion: v1\nkind: Config\n", "type": "string", "sensitive": true},
		},
		Resources: resources,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return b, managed
}

func gzipBytes(tb testing.TB, b []byte, level int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, level)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// cut splits b the way Terraform does: pieces of size bytes, the last one
// shorter.
func cut(b []byte, size int) [][]byte {
	var pieces [][]byte
	for len(b) > size {
		pieces = append(pieces, b[:size])
		b = b[size:]
	}
	return append(pieces, b)
}

// secretsFor wraps pieces into state Secrets of testSuffix, base first.
func secretsFor(pieces ...[]byte) []corev1.Secret {
	secrets := make([]corev1.Secret, len(pieces))
	for i, p := range pieces {
		secrets[i] = stateSecret(ChunkName(testSuffix, i), p)
	}
	return secrets
}

func stateSecret(name string, data []byte) corev1.Secret {
	return corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", ResourceVersion: strconv.Itoa(len(data) + len(name)),
			Labels: map[string]string{
				LabelState: "true", LabelSecretSuffix: testSuffix, LabelWorkspace: Workspace,
				LabelManagedBy: ManagedByTerraform,
			},
			Annotations: map[string]string{AnnotationEncoding: EncodingGzip},
		},
		Data: map[string][]byte{DataKey: data},
	}
}

// gzipBomb returns a valid gzip stream of prefix followed by 1+258*repeats
// fill bytes, written by hand because compressing a gigabyte takes seconds.
// After a stored block with the prefix comes one dynamic Huffman block whose
// codes make "repeat the last 258 bytes" two zero bits, so the stream is
// almost all zero bytes: deflate's ratio limit of 1032.
func gzipBomb(prefix string, fill byte, repeats int) []byte {
	var w bitWriter
	if prefix != "" {
		w.bits(0, 3) // not final, stored
		w.used = 0   // stored data starts on a byte boundary
		w.buf = binary.LittleEndian.AppendUint16(w.buf, uint16(len(prefix)))
		w.buf = binary.LittleEndian.AppendUint16(w.buf, ^uint16(len(prefix)))
		w.buf = append(w.buf, prefix...)
	}
	w.bits(1, 1) // final block
	w.bits(2, 2) // dynamic Huffman
	w.bits(29, 5)
	w.bits(1, 5)
	w.bits(14, 4)
	// Code length code lengths, in RFC 1951 order 16,17,18,0,8,7,...,2,14,1:
	// 18 -> 1 bit, 2 -> 2 bits, 1 -> 2 bits.
	for _, l := range []uint64{0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2} {
		w.bits(l, 3)
	}
	// Canonical codes: 18 = 0, 1 = 10, 2 = 11.
	code := map[int][2]uint64{18: {0, 1}, 1: {2, 2}, 2: {3, 2}}
	emit := func(sym int) { w.code(code[sym][0], int(code[sym][1])) }
	zeros := func(n int) { // 18 repeats a zero length 11..138 times
		if r := n % 138; r != 0 && r < 11 {
			panic("gzipBomb: fill byte needs a zero run this encoder does not write")
		}
		for n > 0 {
			k := min(n, 138)
			emit(18)
			w.bits(uint64(k-11), 7)
			n -= k
		}
	}
	// Literal/length lengths: fill -> 2, 256 -> 2, 285 -> 1; distances 0, 1 -> 1.
	zeros(int(fill))
	emit(2)
	zeros(255 - int(fill))
	emit(2)
	zeros(28)
	emit(1)
	emit(1)
	emit(1)
	w.code(2, 2) // the fill literal (codes: 285 = 0, fill = 10, 256 = 11)
	w.zeroBits(2 * repeats)
	w.code(3, 2) // end of block
	n := 1 + 258*repeats
	crc := crc32.ChecksumIEEE([]byte(prefix))
	block := bytes.Repeat([]byte{fill}, 1<<20)
	for left := n; left > 0; left -= len(block) {
		crc = crc32.Update(crc, crc32.IEEETable, block[:min(left, len(block))])
	}
	out := append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, w.buf...)
	out = binary.LittleEndian.AppendUint32(out, crc)
	return binary.LittleEndian.AppendUint32(out, uint32(len(prefix)+n))
}

// gibRepeats makes a gzipBomb of about 1 GiB.
const gibRepeats = (1<<30 - 1) / 258

// bitWriter writes a deflate bit stream, least significant bit first.
type bitWriter struct {
	buf  []byte
	used int // bits used in the last byte
}

func (w *bitWriter) bit(b uint64) {
	if w.used == 0 {
		w.buf = append(w.buf, 0)
	}
	w.buf[len(w.buf)-1] |= byte(b&1) << w.used
	w.used = (w.used + 1) % 8
}

func (w *bitWriter) bits(v uint64, n int) {
	for i := range n {
		w.bit(v >> i)
	}
}

// code writes a Huffman code, most significant bit first.
func (w *bitWriter) code(c uint64, n int) {
	for i := n - 1; i >= 0; i-- {
		w.bit(c >> i)
	}
}

func (w *bitWriter) zeroBits(n int) {
	for ; n > 0 && w.used != 0; n-- {
		w.bit(0)
	}
	w.buf = append(w.buf, make([]byte, n/8)...)
	w.bits(0, n%8)
}
