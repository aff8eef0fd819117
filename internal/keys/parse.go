package keys

import (
	//lint:ignore SA1019 GitLab still accepts (and restricts) DSA keys; only their size is read.
	"crypto/dsa"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"strings"

	"golang.org/x/crypto/ssh"
)

// MaxKeyLength bounds a public key's text, as GitLab's Key model does.
const MaxKeyLength = 5000

// Types are the key families GitLab restricts, in its order; each has an
// application setting <type>_key_restriction.
var Types = []string{"rsa", "dsa", "ecdsa", "ed25519", "ecdsa_sk", "ed25519_sk"}

// algorithms maps the SSH algorithm names GitLab accepts to their family.
var algorithms = map[string]string{
	ssh.KeyAlgoRSA: "rsa",
	//lint:ignore SA1019 GitLab accepts DSA keys unless dsa_key_restriction forbids them.
	ssh.InsecureKeyAlgoDSA: "dsa",
	ssh.KeyAlgoECDSA256:    "ecdsa",
	ssh.KeyAlgoECDSA384:    "ecdsa",
	ssh.KeyAlgoECDSA521:    "ecdsa",
	ssh.KeyAlgoED25519:     "ed25519",
	ssh.KeyAlgoSKECDSA256:  "ecdsa_sk",
	ssh.KeyAlgoSKED25519:   "ed25519_sk",
}

// Parsed is a public key read from its authorized_keys text.
type Parsed struct {
	// Text is the key normalised: "<algorithm> <base64>[ <comment>]",
	// whitespace collapsed.
	Text string
	// Type is the family (Types) and Bits its size; Type is "" when the
	// key could not be read.
	Type string
	Bits int
	// Public is the key itself, nil when it could not be read.
	Public ssh.PublicKey
	// MD5 is the colon-hex fingerprint; SHA256 the unpadded base64 digest
	// without its "SHA256:" prefix.
	MD5, SHA256 string
}

// Valid reports whether the key could be read.
func (p Parsed) Valid() bool { return p.Public != nil }

// KnownAlgorithmPrefix reports whether text starts with an algorithm
// name GitLab accepts (its Key model's format check).
func KnownAlgorithmPrefix(text string) bool {
	for name := range algorithms {
		if strings.HasPrefix(text, name) {
			return true
		}
	}
	return false
}

// Parse reads a public key in authorized_keys form ("ssh-ed25519 AAAA…
// comment"), without options. A text it cannot read gives a Parsed whose
// Text is the trimmed input and that is not Valid; it never fails
// otherwise, so that validation can report every problem at once.
func Parse(text string) Parsed {
	text = strings.TrimSpace(text)
	fields := strings.Fields(text)
	out := Parsed{Text: text}
	if len(fields) < 2 || len(text) > MaxKeyLength {
		return out
	}
	family, ok := algorithms[fields[0]]
	if !ok {
		return out
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return out
	}
	pk, err := ssh.ParsePublicKey(blob)
	if err != nil || pk.Type() != fields[0] {
		return out
	}
	bits, ok := keyBits(pk, family)
	if !ok {
		return out
	}
	out.Text = strings.Join(fields, " ")
	out.Type, out.Bits, out.Public = family, bits, pk
	out.MD5 = ssh.FingerprintLegacyMD5(pk)
	out.SHA256 = strings.TrimPrefix(ssh.FingerprintSHA256(pk), "SHA256:")
	return out
}

// keyBits is the size GitLab compares with the restriction: the modulus
// of RSA, p of DSA, the curve of ECDSA, 256 for the others.
func keyBits(pk ssh.PublicKey, family string) (int, bool) {
	switch family {
	case "rsa", "dsa", "ecdsa":
		cp, ok := pk.(ssh.CryptoPublicKey)
		if !ok {
			return 0, false
		}
		switch k := cp.CryptoPublicKey().(type) {
		case *rsa.PublicKey:
			return k.N.BitLen(), true
		case *dsa.PublicKey:
			return k.P.BitLen(), true
		case *ecdsa.PublicKey:
			return k.Curve.Params().BitSize, true
		}
		return 0, false
	default:
		return 256, true
	}
}

// Fingerprint is a fingerprint a caller looks a key up by.
type Fingerprint struct {
	SHA256 bool
	// Value is the stored form: unpadded base64 for SHA256, colon hex
	// for MD5.
	Value string
}

// ParseFingerprint reads "SHA256:<base64>" (either case of the prefix) or
// the MD5 colon form "aa:bb:…" (16 bytes); ok is false for anything else.
func ParseFingerprint(s string) (Fingerprint, bool) {
	if len(s) > 7 && strings.EqualFold(s[:7], "sha256:") {
		v := strings.TrimRight(s[7:], "=")
		b, err := base64.RawStdEncoding.DecodeString(v)
		if err != nil || len(b) != 32 {
			return Fingerprint{}, false
		}
		return Fingerprint{SHA256: true, Value: base64.RawStdEncoding.EncodeToString(b)}, true
	}
	if len(s) != 47 {
		return Fingerprint{}, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i%3 == 2 {
			if c != ':' {
				return Fingerprint{}, false
			}
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return Fingerprint{}, false
		}
	}
	return Fingerprint{Value: strings.ToLower(s)}, true
}
