/*
 * election.pml: herd-free election with terms and the leader node
 * (package election), on the Session's self-expiry (session.go).
 *
 * Size: NC candidates (NC <= 3), FAULTS faults and user actions at most
 * (partition, pause, crash, restart, resign, an operator deleting a
 * candidate's node, a candidate offering again).
 *
 * Broken variants (each must yield a counterexample):
 *   -DNO_SELF_EXPIRY the Session never declares itself Lost: a partitioned
 *                   leader keeps leading until it hears of the expiry
 *   -DNO_TERM_CHECK  leaveOffice deletes the leader node without checking
 *                   that the term is still its own
 *   -DNO_RECHECK     a follower whose predecessor goes takes office without
 *                   reading the participants again (seed 001's pitfall)
 *
 * Each step is one d_step: one ZooKeeper request or multi, or one local
 * decision, named in the comment above it as file.go function. Watches
 * are flags set by the write that fires them and consumed by a later step,
 * so notifications arrive arbitrarily late.
 *
 * Abstractions: the participants' sequence order is creation order (zxid
 * order; the counter does not wrap); a process restart reuses its index
 * once its old session has expired; the leader's work is one "use" of a
 * fenced service per leadership.
 */

#ifndef NC
#define NC 3
#endif
#ifndef FAULTS
#define FAULTS 2
#endif

#define OFF  0
#define LIVE 1
#define LOST 2

/* Candidate roles (election/events.go State.Role, plus the steps of run) */
#define IDLE    0 /* no candidate: not offered, or finished */
#define DET     1 /* candidate.go determine is due */
#define FOLLOW  2 /* watching its predecessor */
#define LEADP   3 /* lowest: candidate.go lead / term.go takeOffice due */
#define LEAD    4 /* Leading: Leadership.Done open */
#define FIN     5 /* candidate.go finish: leadership ended, node deletion due */

/* why it finished (candidate.go finish's cause) */
#define C_RESIGN  1
#define C_DEPOSED 2
#define C_MISSING 3
#define C_LOST    4

/* ---- ZooKeeper ---- */
bit  node[NC];   /* the candidate's node _c_<uuid>-latch-<seq>, ephemeral */
byte seq[NC];    /* its sequence, its czxid: the fencing token */
bit  srv[NC];
byte zxid;
byte term;       /* version of the term node */
byte ack;        /* the leader node (ephemeral): owner + 1, 0 if absent */
/* watches on a predecessor's node: watcher c watches node pred[c]-1 */
byte pred[NC];
bit  notify[NC]; /* its predecessor watch fired */
bit  ownfired[NC]; /* the watch on its own node (a leader's) fired */

/* ---- each process ---- */
byte lsess[NC];
bit  cut[NC];
bit  paused[NC];
bit  stale[NC];   /* ghost: its session expired while it was paused */
bit  revoked[NC]; /* ghost: its node was deleted by someone else while it led */
byte role[NC];
byte cause[NC];
bit  office[NC];  /* took office (c.office != nil) */
byte myterm[NC];
bit  leading[NC]; /* Leadership.Done open */
bit  used[NC];
byte lasttok;     /* ghost: token of the last leader that took office */
byte svc;         /* the fenced service: largest token accepted */

byte budget = FAULTS;
bit  led;         /* ghost: some running candidate leads, or none is left */

hidden byte hi, hj, hk;

#define UP(c)    (lsess[c] == LIVE && !paused[c])
#define RUNS(c)  (lsess[c] != OFF && !paused[c])
#define REACH(c) (UP(c) && !cut[c] && srv[c])

/* Invariants, checked after every step:
 * at most one leader among candidates whose process runs and whose
 * ownership was not taken away behind their back (session expired while
 * paused, node deleted by an operator); and a leader of the current term
 * finds the leader node naming it. */
inline check() {
	hk = 0;
	for (hi : 0 .. NC - 1) {
		if
		:: leading[hi] && !paused[hi] && !stale[hi] && !revoked[hi] -> hk++
		:: else -> skip
		fi;
		if
		:: leading[hi] && !stale[hi] && myterm[hi] == term -> assert(ack == hi + 1)
		:: else -> skip
		fi
	}
	assert(hk <= 1)
}

inline update() {
	led = 1; hk = 0;
	for (hi : 0 .. NC - 1) {
		if
		:: lsess[hi] == LIVE && !cut[hi] && role[hi] != IDLE -> hk++
		:: else -> skip
		fi
	}
	if
	:: hk > 0 ->
		led = 0;
		for (hi : 0 .. NC - 1) {
			if :: leading[hi] && REACH(hi) -> led = 1 :: else -> skip fi
		}
	:: else -> skip
	fi
}

#define END_STEP check(); update(); skip

/* a node is deleted: the watches on it fire */
inline node_gone(n) {
	node[n] = 0;
	for (hj : 0 .. NC - 1) {
		if :: pred[hj] == n + 1 -> notify[hj] = 1; pred[hj] = 0 :: else -> skip fi
	}
	if :: role[n] == LEAD || role[n] == LEADP -> ownfired[n] = 1 :: else -> skip fi
}

/* the state machine ends: finish's first half (Leadership.end) */
inline end_role(c, why) {
	leading[c] = 0; used[c] = 0; cause[c] = why; role[c] = FIN
}

inline reset(c) {
	role[c] = IDLE; cause[c] = 0; office[c] = 0; myterm[c] = 0; leading[c] = 0;
	used[c] = 0; notify[c] = 0; ownfired[c] = 0; pred[c] = 0; stale[c] = 0;
	revoked[c] = 0; cut[c] = 0
}

proctype Candidate(byte c) {
end:
	do
	/* session.go checkSilence: Lost (or Expired reported); the state
	 * machine's select on sess.Done() ends it (lostErr) */
#ifndef NO_SELF_EXPIRY
	:: d_step { UP(c) && (cut[c] || !srv[c]) ->
#else
	:: d_step { UP(c) && !srv[c] ->
#endif
		lsess[c] = LOST;
		if :: role[c] != IDLE && role[c] != FIN -> end_role(c, C_LOST) :: else -> skip fi;
		END_STEP }
	/* the process gives up its Session after the loss */
	:: d_step { RUNS(c) && lsess[c] == LOST && (role[c] == IDLE || role[c] == FIN) ->
		lsess[c] = OFF; role[c] = IDLE; cause[c] = 0; office[c] = 0; myterm[c] = 0; END_STEP }

	/* candidate.go offer: CreateProtected(ephemeral sequential); the first
	 * offer is free, later ones count against the budget */
	:: d_step { REACH(c) && role[c] == IDLE && !node[c] && (seq[c] == 0 || budget > 0) ->
		if :: seq[c] != 0 -> budget-- :: else -> skip fi;
		zxid++; node[c] = 1; seq[c] = zxid; role[c] = DET; END_STEP }

	/* candidate.go determine: read every participant; missing: finish;
	 * lowest: lead; otherwise GetW the predecessor (a predecessor gone
	 * before the GetW is looked for again in the same step) */
	:: d_step { REACH(c) && role[c] == DET ->
		if
		:: !node[c] -> end_role(c, C_MISSING)
		:: else ->
			hk = 0;
			for (hi : 0 .. NC - 1) {
				if
				:: node[hi] && seq[hi] < seq[c] && (hk == 0 || seq[hi] > seq[hk - 1]) -> hk = hi + 1
				:: else -> skip
				fi
			}
			if
			:: hk == 0 -> role[c] = LEADP
			:: else -> pred[c] = hk; role[c] = FOLLOW
			fi
		fi;
		END_STEP }
	/* candidate.go loop: the predecessor watch fires: determine again */
	:: d_step { RUNS(c) && role[c] == FOLLOW && notify[c] ->
		notify[c] = 0;
#ifndef NO_RECHECK
		role[c] = DET;
#else
		role[c] = LEADP;
#endif
		END_STEP }

	/* term.go takeOffice: Exists(own node) (owner check), Get(term);
	 * multi(check own node, set term at its version, replace the leader
	 * node); then candidate.go lead: GetW(term) and GetW(own node) */
	:: d_step { REACH(c) && role[c] == LEADP ->
		if
		:: !node[c] -> end_role(c, C_MISSING)
		:: else ->
			term++; ack = c + 1; myterm[c] = term; office[c] = 1;
			/* property: fencing tokens never go backwards */
			assert(seq[c] > lasttok);
			lasttok = seq[c];
			leading[c] = 1; used[c] = 0; role[c] = LEAD
		fi;
		END_STEP }
	/* the leader works: it passes its token to a fenced service that
	 * refuses tokens older than the newest it accepted */
	:: d_step { RUNS(c) && leading[c] && !used[c] ->
		used[c] = 1;
		if
		:: seq[c] >= svc -> svc = seq[c]
		:: else -> assert(stale[c] || revoked[c])
		fi;
		END_STEP }
	/* candidate.go lead: the term watch fires, bumped by someone else:
	 * ErrDeposed */
	:: d_step { RUNS(c) && role[c] == LEAD && term != myterm[c] ->
		end_role(c, C_DEPOSED); END_STEP }
	/* candidate.go lead: the own-node watch fires: missing (ErrNodeDeleted) */
	:: d_step { RUNS(c) && role[c] == LEAD && ownfired[c] ->
		ownfired[c] = 0; end_role(c, C_MISSING); END_STEP }
	/* Candidate.Resign: stop(ErrResigned) */
	:: d_step { RUNS(c) && budget > 0 && role[c] != IDLE && role[c] != FIN ->
		budget--; end_role(c, C_RESIGN); END_STEP }

	/* candidate.go finish, second half, Session alive: a leader that took
	 * office and was not deposed: term.go leaveOffice: multi(check term,
	 * delete leader node, delete own node), else (check term, delete
	 * leader node) then delete own node; otherwise deleteNode */
	:: d_step { REACH(c) && role[c] == FIN ->
		if
		:: office[c] && cause[c] != C_DEPOSED ->
#ifndef NO_TERM_CHECK
			if :: term == myterm[c] && ack == c + 1 -> ack = 0 :: else -> skip fi;
#else
			ack = 0;
#endif
			skip
		:: else -> skip
		fi;
		if :: node[c] -> node_gone(c) :: else -> skip fi;
		role[c] = IDLE; cause[c] = 0; office[c] = 0; myterm[c] = 0;
		pred[c] = 0; notify[c] = 0; ownfired[c] = 0;
		END_STEP }
	/* candidate.go finish after a loss: the node stays until the server
	 * expires the session */
	:: d_step { RUNS(c) && lsess[c] == LOST && role[c] == FIN ->
		role[c] = IDLE; pred[c] = 0; notify[c] = 0; ownfired[c] = 0; END_STEP }
	od
}

#ifndef NO_SELF_EXPIRY
#define EXPIRABLE(c) (srv[c] && (lsess[c] == OFF || paused[c] || (lsess[c] == LOST && !leading[c])))
#else
#define EXPIRABLE(c) (srv[c] && (lsess[c] == OFF || paused[c] || cut[c]))
#endif

/* the server expires a session: its ephemeral nodes go */
inline expire(c) {
	srv[c] = 0;
	if :: node[c] -> node_gone(c) :: else -> skip fi;
	if :: ack == c + 1 -> ack = 0 :: else -> skip fi;
	if :: paused[c] && leading[c] -> stale[c] = 1 :: else -> skip fi
}

active proctype Server() {
end:
	do
	:: d_step { EXPIRABLE(0) -> expire(0); END_STEP }
	:: d_step { EXPIRABLE(1) -> expire(1); END_STEP }
#if NC > 2
	:: d_step { EXPIRABLE(2) -> expire(2); END_STEP }
#endif
	od
}

#define ENV_CLIENT(c) \
	/* the process (re)starts with a new Session */ \
	:: d_step { budget > 0 && lsess[c] == OFF && !srv[c] -> budget--; \
		reset(c); lsess[c] = LIVE; srv[c] = 1; seq[c] = 0; END_STEP } \
	/* the process crashes */ \
	:: d_step { budget > 0 && lsess[c] != OFF -> budget--; \
		reset(c); lsess[c] = OFF; paused[c] = 0; END_STEP } \
	/* a network partition */ \
	:: d_step { budget > 0 && lsess[c] == LIVE && !cut[c] -> budget--; cut[c] = 1; END_STEP } \
	/* a pause of any length */ \
	:: d_step { budget > 0 && lsess[c] != OFF && !paused[c] -> budget--; paused[c] = 1; END_STEP } \
	:: d_step { paused[c] -> paused[c] = 0; END_STEP } \
	/* an operator deletes the candidate's node */ \
	:: d_step { budget > 0 && node[c] -> budget--; \
		if :: leading[c] -> revoked[c] = 1 :: else -> skip fi; \
		node_gone(c); END_STEP }

active proctype Env() {
	do
	ENV_CLIENT(0)
	ENV_CLIENT(1)
#if NC > 2
	ENV_CLIENT(2)
#endif
	:: !paused[0] && !paused[1] && (NC < 3 || !paused[NC - 1]) -> break
	od
}

/* nothing can move any more: someone leads (or nobody is left) */
active proctype Quiet() {
	timeout -> assert(led)
}

init {
	d_step {
		for (hi : 0 .. NC - 1) { lsess[hi] = LIVE; srv[hi] = 1 }
		END_STEP
	}
	atomic {
		for (hk : 0 .. NC - 1) { run Candidate(hk) }
	}
}

/* With faults over and weak fairness, a reachable candidate ends up
 * leading for good. */
ltl eventually_leader { <> [] led }
