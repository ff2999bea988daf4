package zkserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// tlsServerName is the name the server certificates are issued for (besides
// the loopback IP addresses) and the ServerName of ClientTLSConfig.
const tlsServerName = "localhost"

// tlsMaterial is a throwaway CA and a server certificate it signed, written
// as PEM files the servers read.
type tlsMaterial struct {
	caPool         *x509.CertPool
	keyStorePath   string // server key and certificate chain
	trustStorePath string // CA certificate
}

func newTLSMaterial(dir string) (*tlsMaterial, error) {
	caKey, caDER, err := issue(&x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "zktest CA"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, der, err := issue(&x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: tlsServerName},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{tlsServerName},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}, caCert, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}

	m := &tlsMaterial{
		caPool:         x509.NewCertPool(),
		keyStorePath:   filepath.Join(dir, "keystore.pem"),
		trustStorePath: filepath.Join(dir, "truststore.pem"),
	}
	m.caPool.AddCert(caCert)
	keyStore := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	keyStore = append(keyStore, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	keyStore = append(keyStore, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...)
	if err := os.WriteFile(m.keyStorePath, keyStore, 0o600); err != nil {
		return nil, err
	}
	trustStore := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	if err := os.WriteFile(m.trustStorePath, trustStore, 0o644); err != nil {
		return nil, err
	}
	return m, nil
}

// issue makes a new P-256 key and, from tmpl, a certificate of it valid
// from an hour ago for a day, signed by parent with parentKey, or by itself
// if parent is nil. It returns the key and the certificate's DER.
func issue(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, err
	}
	return key, der, nil
}

func (m *tlsMaterial) clientConfig() *tls.Config {
	return &tls.Config{
		RootCAs:    m.caPool,
		ServerName: tlsServerName,
		MinVersion: tls.VersionTLS12,
	}
}
