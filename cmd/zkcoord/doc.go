// Command zkcoord coordinates processes through Apache ZooKeeper from the
// shell: it runs a command under a lock, runs a command only while leading an
// election (with fencing of the previous active for failover), and shares
// resources among workers that each run one command per resource they are
// given. It also reads and changes groups, barriers, queues and counters,
// reads and changes any node as zkCli.sh does (ls, get, set, create, rm, acl
// and friends), and plays a demo of the rebalancer on a ZooKeeper server of
// its own.
//
// Usage:
//
//	zkcoord COMMAND [ARGUMENTS] [FLAGS]
//
// Commands:
//
//	lock PATH -- CMD...                       run CMD while holding a lock
//	elect PATH [--fence FENCE] -- CMD...      stand by; run CMD while leader, stop it on loss
//	leader PATH                               show who leads an election
//	rebalance GROUP --exec 'CMD {resource}'   join a group; run one CMD per resource given to this worker
//	resources add|rm|ls GROUP [RESOURCE...]   register, unregister or list a group's resources
//	status GROUP [--json] [--watch]           members, coordinator, term, allocation, barriers
//	barrier set|rm|wait|check|enter PATH      barriers and double barriers
//	queue put|take|len PATH                   a distributed (priority) queue
//	counter get|set|add PATH                  a shared 32-bit counter
//	locks ls PATH                             holders and waiters of a lock
//	lock break PATH --yes, lock revoke PATH   break a lock, or ask its holder to release it
//	election ls PATH                          participants of an election
//	election revoke PATH                      ask an election's leader to step down
//	watch PATH [--tree]                       print changes as they happen
//	ls [-R] PATH                              a node's children, or its subtree
//	get PATH [--raw]                          a node's data (shown safely on a terminal)
//	stat PATH                                 a node's metadata
//	set PATH DATA|- [--version N]             write a node's data
//	create PATH [DATA|-]                      create a node (--parents, --sequential, --ephemeral, --ttl)
//	rm [-r] PATH [--yes]                      delete a node, or a subtree
//	acl get|set PATH [ACL...]                 a node's ACL, in zkCli.sh's syntax
//	whoami                                    the identities the server knows zkcoord by
//	ephemerals [PATH]                         ephemeral nodes and their sessions
//	server stat [SERVER...]                   each server's mode, zxid, nodes, connections
//	ensemble show|add|remove|set              the ensemble's membership (zkCli.sh's config, reconfig)
//	services ls|get|register                  Curator-compatible service discovery
//	ui [--listen ADDR]                        the live web console
//	demo                                      watch workers share resources while things go wrong
//	completion bash|zsh|fish|powershell       shell completion script
//
// "zkcoord help" lists the commands and "zkcoord COMMAND --help" explains
// one; the help is generated from the flags each command declares (package
// github.com/spf13/cobra). The command line follows cobra's rules: flags may
// come before, between or after the arguments, and everything after "--"
// is the command to run or, for a command that runs none, more arguments,
// taken as they are: an argument that starts with "-", like a negative
// number, goes there (counter add /c -- -5).
//
// The demo is played by zkcoord-demo (cmd/zkcoord-demo; make demo builds
// both), so that zkcoord itself links neither the demo's ZooKeeper
// launcher nor the checker of its verdict; "zkcoord demo" runs
// zkcoord-demo from beside it, or from the PATH.
//
// # Connection
//
// Every command accepts these flags, whose defaults come from the
// environment:
//
//	--zk HOST:PORT,...      ZKCOORD_SERVERS          (default 127.0.0.1:2181)
//	--chroot PATH           ZKCOORD_CHROOT           must exist (create --parents creates it)
//	--session-timeout DUR   ZKCOORD_SESSION_TIMEOUT  (default 10s)
//	--auth USER:PASSWORD    ZKCOORD_AUTH             digest credentials
//	--acl open|creator      ZKCOORD_ACL              ACL of the nodes created
//	--tls                   ZKCOORD_TLS
//	--tls-ca FILE           ZKCOORD_TLS_CA
//	--tls-cert FILE         ZKCOORD_TLS_CERT
//	--tls-key FILE          ZKCOORD_TLS_KEY
//	--connect-timeout DUR   ZKCOORD_CONNECT_TIMEOUT  (default 15s)
//	--sasl-user USER        ZKCOORD_SASL_USER        SASL DIGEST-MD5 user
//	--sasl-password PW      ZKCOORD_SASL_PASSWORD
//	--sasl-password-file F  ZKCOORD_SASL_PASSWORD_FILE
//	--kerberos-principal P  ZKCOORD_KERBEROS_PRINCIPAL  Kerberos (SASL GSSAPI), with:
//	--kerberos-keytab FILE  ZKCOORD_KERBEROS_KEYTAB
//	--kerberos-config FILE  ZKCOORD_KERBEROS_CONFIG  krb5.conf (default $KRB5_CONFIG, /etc/krb5.conf)
//	--kerberos-service NAME ZKCOORD_KERBEROS_SERVICE (default zookeeper)
//	--kerberos-server-principal P  ZKCOORD_KERBEROS_SERVER_PRINCIPAL
//	--pin-servers           ZKCOORD_PIN_SERVERS      only the servers of --zk, not the
//	                                                 members of /zookeeper/config
//	--log-level LEVEL       ZKCOORD_LOG_LEVEL        debug, info, warn, error
//	--log-format FORMAT     ZKCOORD_LOG_FORMAT       text or json (logs go to standard error)
//	--metrics ADDR          ZKCOORD_METRICS          Prometheus metrics at http://ADDR/metrics
//
// # Commands run by zkcoord
//
// A command run under a lock, a leadership or a resource gets its fencing
// token in ZKCOORD_TOKEN (the creation zxid of the lock, leader or barrier
// node: every later owner has a larger one, so a resource that remembers the
// largest token it has seen can refuse an owner that lost its claim without
// noticing), and ZKCOORD_PATH, ZKCOORD_ID, ZKCOORD_RESOURCE, ZKCOORD_TERM,
// ZKCOORD_GROUP, ZKCOORD_GENERATION, ZKCOORD_NODE as each command documents.
//
// It runs in a process group of its own. zkcoord stops it with SIGTERM to
// its processes and, after a grace period, SIGKILL; it waits for them to
// exit before it releases what the command ran under. Whatever the grace
// period, they are killed shortly before the server may expire the session (the send time
// of the last request the server answered plus the negotiated timeout), so a
// stop that begins or continues while zkcoord is cut off from ZooKeeper never
// runs past the point where someone else may take over. When someone else
// may already own the claim (the session expired, the node was deleted, a
// newer leader took over), the command is killed at once.
//
// A command's processes are the command and every process it starts: on
// Linux also those that leave its process group or session (setsid,
// setpgid, a double fork, a daemonizing wrapper); on other Unix systems
// those of its process group only; on Windows those of its job object.
// Whatever the command leaves running when it exits is killed (SIGKILL), and
// zkcoord reports the command stopped, and releases what it ran under, only
// once all of them are gone. They die with zkcoord, also when zkcoord is
// killed with SIGKILL: on Unix the command is started through a small shim
// (zkcoord itself, re-executed) that kills them as soon as zkcoord is gone,
// so that grandchildren started through a shell or a wrapper script do not
// outlive it. On Linux the shim is a child subreaper: every orphan of the
// command's tree becomes its child, and it kills every process below it,
// scanning /proc again until it finds none left, and exits only once it
// has reaped them all. Out of reach: a process zkcoord may not signal (a
// setuid program running as another user), and, if the shim alone is
// killed (not zkcoord), a process that left the command's group.
//
// # Exit codes
//
//	0  success
//	1  failure: cannot connect, an operation failed, a child could not be kept running
//	2  usage error: bad flags or arguments
//	3  the lock or leadership was lost (the command run under it was stopped)
//
// When a command run by zkcoord ends by itself, zkcoord exits with its
// status (128 plus the signal number if a signal ended it).
//
// The long-running commands ride out a ZooKeeper incident: when their
// session is lost or expires, elect (once its command is stopped) stands
// by again, services register registers again, rebalance joins again,
// watch and ui carry on, each with a new session; a command that cannot
// reach ZooKeeper at its start still exits 1. With --no-recover, elect,
// services register and rebalance exit instead: 3 (1 for a candidate that
// was standing by). A loss of leadership with the session alive exits 3
// (elect --rejoin stands by again), and so does the loss of a lock.
package main
