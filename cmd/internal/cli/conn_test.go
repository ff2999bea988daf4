package cli

import (
	"slices"
	"testing"
	"time"
)

// --zk takes a connect string as zkCli, Curator and Kazoo do, chroot
// suffix included; a chroot given twice must agree.
func TestConnectStringChroot(t *testing.T) {
	base := ConnOptions{SessionTimeout: time.Second, ConnectTimeout: time.Second}
	o := base
	o.Servers = "zk1:2181,zk2/app"
	cfg, err := o.Config()
	if err != nil || !slices.Equal(cfg.Servers, []string{"zk1:2181", "zk2:2181"}) || cfg.Chroot != "/app" {
		t.Fatalf("Config = %+v, %v", cfg, err)
	}
	o = base
	o.Servers, o.Chroot = "zk1:2181/app", "/other"
	if _, err := o.Config(); err == nil {
		t.Fatal("two different chroots were accepted")
	}
	o = base
	o.Servers = " , "
	if _, err := o.Config(); err == nil {
		t.Fatal("no servers were accepted")
	}
}
