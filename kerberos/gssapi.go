package kerberos

import (
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// krb5OID is the Kerberos V5 GSS-API mechanism (RFC 1964).
var krb5OID = asn1.ObjectIdentifier{1, 2, 840, 113554, 1, 2, 2}

// The SASL GSSAPI security layers (RFC 4752 3.3): ZooKeeper's server
// offers them all; this client takes none, as ZooKeeper's does.
const noSecurityLayer = 0x01

// exchange is the client side of one SASL GSSAPI exchange without mutual
// authentication requested: the AP-REQ, then the server's wrapped offer
// of security layers, answered with a wrapped choice of none. The offer's
// checksum, made with the ticket's session key, is what proves the
// server's identity.
type exchange struct {
	key  types.EncryptionKey
	seq  uint64 // the initiator's sequence number, from the authenticator
	done bool
}

// newExchange makes the AP-REQ for a ticket, framed as a GSS-API initial
// context token, with the integrity and confidentiality flags set.
func newExchange(realm string, cname types.PrincipalName, tkt messages.Ticket, key types.EncryptionKey) (*exchange, []byte, error) {
	auth, err := types.NewAuthenticator(realm, cname)
	if err != nil {
		return nil, nil, err
	}
	// The GSS-API checksum (RFC 4121 4.1.1): the length of the channel
	// bindings' hash, that hash (none: zeros), the context flags.
	ck := make([]byte, 24)
	binary.LittleEndian.PutUint32(ck[:4], 16)
	binary.LittleEndian.PutUint32(ck[20:], uint32(gssapi.ContextFlagInteg|gssapi.ContextFlagConf))
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: ck}
	req, err := messages.NewAPReq(tkt, key, auth)
	if err != nil {
		return nil, nil, err
	}
	apreq, err := req.Marshal()
	if err != nil {
		return nil, nil, err
	}
	oid, err := asn1.Marshal(krb5OID)
	if err != nil {
		return nil, nil, err
	}
	tok := append(oid, 0x01, 0x00) // TOK_ID KRB_AP_REQ
	tok = append(tok, apreq...)
	return &exchange{key: key, seq: uint64(auth.SeqNumber)}, asn1tools.AddASNAppTag(tok, 0), nil
}

// Next answers the server's wrapped offer of security layers.
func (x *exchange) Next(token []byte) ([]byte, bool, error) {
	if x.done {
		return nil, false, errors.New("GSSAPI: a token after the exchange ended")
	}
	if len(token) == 0 {
		return nil, false, errors.New("GSSAPI: the server sent no token (is SASL with Kerberos enabled on it?)")
	}
	var offer gssapi.WrapToken
	if err := offer.Unmarshal(token, true); err != nil {
		return nil, false, fmt.Errorf("GSSAPI: the server's token: %w", err)
	}
	const sealed, acceptorSubkey = 0x02, 0x04
	if offer.Flags&(sealed|acceptorSubkey) != 0 {
		return nil, false, fmt.Errorf("GSSAPI: the server's token has flags %#x: sealed or under an acceptor subkey, which this client does not ask for", offer.Flags)
	}
	if ok, err := offer.Verify(x.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
		return nil, false, fmt.Errorf("GSSAPI: the server's token does not prove it holds the service key: %w", err)
	}
	if len(offer.Payload) != 4 || offer.Payload[0]&noSecurityLayer == 0 {
		return nil, false, fmt.Errorf("GSSAPI: the server offers security layers %x, not none", offer.Payload)
	}
	et, err := crypto.GetEtype(x.key.KeyType)
	if err != nil {
		return nil, false, err
	}
	// The choice: no security layer, so a maximum message size of 0,
	// and no authorization identity (the server takes the principal).
	choice := gssapi.WrapToken{
		EC:        uint16(et.GetHMACBitLength() / 8),
		SndSeqNum: x.seq,
		Payload:   []byte{noSecurityLayer, 0, 0, 0},
	}
	if err := choice.SetCheckSum(x.key, keyusage.GSSAPI_INITIATOR_SEAL); err != nil {
		return nil, false, err
	}
	b, err := choice.Marshal()
	if err != nil {
		return nil, false, err
	}
	x.done = true
	return b, true, nil
}
