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
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "zktest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: tlsServerName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{tlsServerName},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
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

func (m *tlsMaterial) clientConfig() *tls.Config {
	return &tls.Config{
		RootCAs:    m.caPool,
		ServerName: tlsServerName,
		MinVersion: tls.VersionTLS12,
	}
}
