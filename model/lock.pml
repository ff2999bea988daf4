/*
 * lock.pml: the Mutex of package lock (Curator's InterProcessMutex
 * layout: ephemeral sequential _c_<uuid>-lock-<seq> nodes, the lowest
 * holds, each waiter watches the contender just before it), on the
 * Session's self-expiry (session.go).
 *
 * Size: NC clients (NC <= 3), FAULTS faults and user actions at most
 * (partition, pause, crash, restart, a waiter giving up, an operator
 * deleting a contender's node, a client locking again).
 *
 * Broken variants (each must yield a counterexample):
 *   -DNO_SELF_EXPIRY the Session never declares itself Lost: a partitioned
 *                   holder keeps the lock until it hears of the expiry
 *   -DNO_RELIST      a waiter whose predecessor goes takes the lock without
 *                   listing the contenders again
 *
 * Lock-delay (lock/delay.go, internal/lockdelay), with -DTIMED: time passes
 * in ticks (the Clock process); a pause lasts at most PAUSE ticks; a
 * contender that finds itself first after an unmarked disappearance waits
 * DELAY ticks (0: no lock-delay). The holder's release writes the mark
 * (the released node's token) in the transaction that deletes its node.
 * A process that runs again while its session is gone at the server sees
 * its loss before the next tick (its silence timer is overdue on resume).
 * The invariant then counts a stale holder too: no overlap even without
 * fencing. Broken variants under -DTIMED:
 *   -DDELAY=n with n <= PAUSE, or no DELAY: a paused holder resumes while
 *                   the next holder acts
 *   -DNO_ARRIVAL_CHECK a contender that finds the lock free and clean on
 *                   arrival does not check that no child vanished between
 *                   its read and its listing
 *
 * Each step is one d_step: one ZooKeeper request or one local decision,
 * named in the comment above it as file.go function. Watches are flags set
 * by the write that fires them and consumed by a later step, so
 * notifications arrive arbitrarily late.
 *
 * Abstractions: contenders are ordered by creation (zxid order; the
 * sequence counter does not wrap); a process restart reuses its index
 * once its old session has expired; the holder's work is one "use" of a
 * fenced service per lease.
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

#define IDLE 0 /* no lock call under way */
#define DET  1 /* acquire.go wait: the contenders are to be listed */
#define WAIT 2 /* acquire.go block: watching the predecessor */
#define HOLD 3 /* a Lease: Done open */
#define GIVE 4 /* acquire.go deleteLater / held.go releaseNode: delete own node */
#define PRE  5 /* delay.go arrive: the directory is to be read first */
#define DLY  6 /* delay.go hold: waiting the lock-delay out */

#ifdef TIMED
#ifndef DELAY
#define DELAY 0
#endif
#ifndef PAUSE
#define PAUSE 2
#endif
/* ---- the lock-delay ---- */
byte mark;         /* lock directory's data: token of the last marked release */
bit  clean = 1;    /* the last change of children was a marked release (pzxid == mzxid) */
bit  rel[NC];      /* GIVE is a holder's release (marked), not a give-up */
byte lp[NC];       /* token of the last predecessor a listing showed */
bit  arr[NC];      /* free and clean on arrival (Arrive) */
bit  vanished[NC]; /* a child vanished since the arrival read (cversion) */
byte dl[NC];       /* ticks of lock-delay left */
byte pz[NC];       /* ticks of pause left */
#endif

/* ---- ZooKeeper ---- */
bit  node[NC];
byte seq[NC];      /* sequence and czxid: the fencing token */
bit  srv[NC];
byte zxid;
byte pred[NC];     /* watch on the predecessor's node: its owner + 1 */
bit  notify[NC];   /* that watch fired */
bit  ownfired[NC]; /* the watch on its own node fired (deleted) */

/* ---- each process ---- */
byte lsess[NC];
bit  cut[NC];
bit  paused[NC];
bit  stale[NC];    /* ghost: session expired while paused holding */
bit  revoked[NC];  /* ghost: node deleted by someone else while holding */
byte st[NC];
bit  used[NC];
bit  locked[NC];   /* has called Lock once (the first call is free) */
byte lasttok;      /* ghost: token of the last grant */
byte svc;          /* fenced service: largest token accepted */

byte budget = FAULTS;
bit  served;       /* ghost: nobody is waiting for or holding the lock */

hidden byte hi, hj, hk;

#define UP(c)    (lsess[c] == LIVE && !paused[c])
#define RUNS(c)  (lsess[c] != OFF && !paused[c])
#define REACH(c) (UP(c) && !cut[c] && srv[c])

/* Invariant: at most one holder among clients whose process runs and whose
 * lease was not taken away behind their back (session expired while
 * paused, node deleted by an operator). */
inline check() {
	hk = 0;
	for (hi : 0 .. NC - 1) {
		if
#ifndef TIMED
		:: st[hi] == HOLD && !paused[hi] && !stale[hi] && !revoked[hi] -> hk++
#else
		/* stale holders count: no fencing to refuse them */
		:: st[hi] == HOLD && !paused[hi] && !revoked[hi] -> hk++
#endif
		:: else -> skip
		fi
	}
	assert(hk <= 1)
}

inline update() {
	served = 1;
	for (hi : 0 .. NC - 1) {
		if :: st[hi] != IDLE -> served = 0 :: else -> skip fi
	}
}

#define END_STEP check(); update(); skip

inline node_gone(n) {
	node[n] = 0;
#ifdef TIMED
	clean = 0;
	for (hj : 0 .. NC - 1) { vanished[hj] = 1 }
#endif
	for (hj : 0 .. NC - 1) {
		if :: pred[hj] == n + 1 -> notify[hj] = 1; pred[hj] = 0 :: else -> skip fi
	}
	if :: st[n] == WAIT || st[n] == HOLD -> ownfired[n] = 1 :: else -> skip fi
}

inline done(c) {
	st[c] = IDLE; used[c] = 0; pred[c] = 0; notify[c] = 0; ownfired[c] = 0
#ifdef TIMED
	; rel[c] = 0; lp[c] = 0; arr[c] = 0; vanished[c] = 0; dl[c] = 0
#endif
}

/* the contender c, found first, takes the lock (held.go newLease) */
inline grant(c) {
	/* property: fencing tokens never go backwards */
	assert(seq[c] > lasttok);
	lasttok = seq[c];
	st[c] = HOLD; used[c] = 0
}

inline reset(c) {
	done(c); stale[c] = 0; revoked[c] = 0; cut[c] = 0; locked[c] = 0
}

proctype Client(byte c) {
end:
	do
	/* session.go checkSilence: Lost (or Expired reported): held.go run
	 * ends the lease (Done closes); acquire.go block returns the
	 * Session's error */
#ifndef NO_SELF_EXPIRY
	:: d_step { UP(c) && (cut[c] || !srv[c]) ->
#else
	:: d_step { UP(c) && !srv[c] ->
#endif
		lsess[c] = LOST; done(c); END_STEP }
	/* the process gives up its Session after the loss */
	:: d_step { RUNS(c) && lsess[c] == LOST -> lsess[c] = OFF; END_STEP }

	/* mutex.go Lock, acquire.go acquire: CreateProtectedAndList; the
	 * first Lock is free, later ones count against the budget */
#ifndef TIMED
	:: d_step { REACH(c) && st[c] == IDLE && !node[c] && (!locked[c] || budget > 0) ->
		if :: locked[c] -> budget-- :: else -> skip fi;
		locked[c] = 1;
		zxid++; node[c] = 1; seq[c] = zxid; st[c] = DET; END_STEP }
#else
	/* internal/lockdelay Arrive: read the directory before the create */
	:: d_step { REACH(c) && st[c] == IDLE && !node[c] && (!locked[c] || budget > 0) ->
		if :: locked[c] -> budget-- :: else -> skip fi;
		locked[c] = 1;
		arr[c] = clean; vanished[c] = 0;
		for (hi : 0 .. NC - 1) {
			if :: node[hi] -> arr[c] = 0 :: else -> skip fi
		}
		st[c] = PRE; END_STEP }
	:: d_step { REACH(c) && st[c] == PRE ->
		zxid++; node[c] = 1; seq[c] = zxid; clean = 0; st[c] = DET; END_STEP }
#endif
	/* acquire.go wait: list the contenders (contenders.go blocker): not
	 * found: ErrNodeDeleted; first: a Lease; otherwise dataWatch the
	 * predecessor (gone already: list again, in the same step) */
	:: d_step { REACH(c) && st[c] == DET ->
		if
		:: !node[c] -> done(c)
		:: else ->
			hk = 0;
			for (hi : 0 .. NC - 1) {
				if
				:: node[hi] && seq[hi] < seq[c] && (hk == 0 || seq[hi] > seq[hk - 1]) -> hk = hi + 1
				:: else -> skip
				fi
			}
			if
#ifndef TIMED
			:: hk == 0 -> grant(c)
#else
			/* internal/lockdelay Tracker.Wait: clean after the predecessor's
			 * marked release, or on a free and clean arrival with no
			 * child vanished since; otherwise wait the delay */
			:: hk == 0 && lp[c] != 0 && mark == lp[c] -> grant(c)
#ifndef NO_ARRIVAL_CHECK
			:: hk == 0 && lp[c] == 0 && arr[c] && !vanished[c] -> grant(c)
#else
			:: hk == 0 && lp[c] == 0 && arr[c] -> grant(c)
#endif
			:: else ->
				if
				:: hk == 0 && DELAY == 0 -> grant(c)
				:: hk == 0 && DELAY > 0 -> dl[c] = DELAY; st[c] = DLY
				:: else -> skip
				fi
#endif
#ifndef TIMED
			:: else -> pred[c] = hk; st[c] = WAIT
#else
			:: hk != 0 -> pred[c] = hk; lp[c] = seq[hk - 1]; st[c] = WAIT
#endif
			fi
		fi;
		END_STEP }
	/* acquire.go block: the predecessor watch fires: list again */
	:: d_step { RUNS(c) && st[c] == WAIT && notify[c] ->
		notify[c] = 0;
#ifndef NO_RELIST
		st[c] = DET;
#else
		assert(seq[c] > lasttok);
		lasttok = seq[c];
		st[c] = HOLD; used[c] = 0;
#endif
		END_STEP }
	/* acquire.go block: the watch on its own node fires: ErrNodeDeleted */
	:: d_step { RUNS(c) && st[c] == WAIT && ownfired[c] -> done(c); END_STEP }
#ifdef TIMED
	/* delay.go hold: the delay has passed: the own node is read
	 * again; there, the lock is held; gone, ErrNodeDeleted */
	:: d_step { REACH(c) && st[c] == DLY && dl[c] == 0 ->
		if :: node[c] -> grant(c) :: else -> done(c) fi; END_STEP }
	/* delay.go hold: the own node is deleted meanwhile */
	:: d_step { RUNS(c) && st[c] == DLY && ownfired[c] -> done(c); END_STEP }
#endif
	/* acquire.go block: ctx ends: the waiter gives up, deleteLater */
	:: d_step { RUNS(c) && budget > 0 && (st[c] == WAIT || st[c] == DET || st[c] == DLY) ->
		budget--; st[c] = GIVE; pred[c] = 0; notify[c] = 0; END_STEP }
	/* the holder works: it passes its token to a fenced service that
	 * refuses tokens older than the newest it accepted */
	:: d_step { RUNS(c) && st[c] == HOLD && !used[c] ->
		used[c] = 1;
		if
		:: seq[c] >= svc -> svc = seq[c]
		:: else -> assert(stale[c] || revoked[c])
		fi;
		END_STEP }
	/* held.go run: the own-node watch fires: lost (ErrNodeDeleted) */
	:: d_step { RUNS(c) && st[c] == HOLD && ownfired[c] -> done(c); END_STEP }
	/* held.go Release: releaseNode */
	:: d_step { RUNS(c) && st[c] == HOLD && used[c] -> st[c] = GIVE; used[c] = 0;
#ifdef TIMED
		rel[c] = 1;
#endif
		END_STEP }
	/* held.go deleteNode / acquire.go deleteLater: delete the own node;
	 * a release (internal/lockdelay Release) writes the mark in the same
	 * transaction */
	:: d_step { REACH(c) && st[c] == GIVE ->
		if :: node[c] -> node_gone(c);
#ifdef TIMED
			if :: rel[c] -> mark = seq[c]; clean = 1 :: else -> skip fi
#endif
		:: else -> skip fi;
		done(c); END_STEP }
	od
}

#ifndef NO_SELF_EXPIRY
#define EXPIRABLE(c) (srv[c] && (lsess[c] == OFF || paused[c] || lsess[c] == LOST))
#else
#define EXPIRABLE(c) (srv[c] && (lsess[c] == OFF || paused[c] || cut[c]))
#endif

inline expire(c) {
	srv[c] = 0;
	if :: paused[c] && st[c] == HOLD -> stale[c] = 1 :: else -> skip fi;
	if :: node[c] -> node_gone(c) :: else -> skip fi
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

#ifdef TIMED
#define PAUSE_START(c) pz[c] = PAUSE
/* A process that runs with its session gone at the server, not yet told,
 * handles that before time passes, and before it can be paused again
 * (two pauses with no step between are one longer pause). */
#define URGENT(c) (!paused[c] && lsess[c] == LIVE && !srv[c])
#define PAUSABLE(c) !URGENT(c)
#else
#define PAUSE_START(c) skip
#define PAUSABLE(c) 1
#endif

#define ENV_CLIENT(c) \
	/* the process (re)starts with a new Session */ \
	:: d_step { budget > 0 && lsess[c] == OFF && !srv[c] -> budget--; \
		reset(c); lsess[c] = LIVE; srv[c] = 1; END_STEP } \
	/* the process crashes */ \
	:: d_step { budget > 0 && lsess[c] != OFF -> budget--; \
		reset(c); lsess[c] = OFF; paused[c] = 0; END_STEP } \
	/* a network partition */ \
	:: d_step { budget > 0 && lsess[c] == LIVE && !cut[c] -> budget--; cut[c] = 1; END_STEP } \
	/* a pause of any length */ \
	:: d_step { budget > 0 && lsess[c] != OFF && !paused[c] && PAUSABLE(c) -> budget--; paused[c] = 1; PAUSE_START(c); END_STEP } \
	:: d_step { paused[c] -> paused[c] = 0; END_STEP } \
	/* an operator deletes the contender's node */ \
	:: d_step { budget > 0 && node[c] -> budget--; \
		if :: st[c] == HOLD -> revoked[c] = 1 :: else -> skip fi; \
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

#ifdef TIMED
/* Time passes while something counts it: a pause (which must end within
 * PAUSE ticks) or a lock-delay. */
#define COUNTING(c) (paused[c] || dl[c] > 0)
#define BLOCKS(c) (URGENT(c) || (paused[c] && pz[c] == 0))

inline tick1(c) {
	if :: paused[c] -> pz[c]-- :: else -> skip fi;
	if :: dl[c] > 0 -> dl[c]-- :: else -> skip fi
}

active proctype Clock() {
end:
	do
	:: d_step { (COUNTING(0) || COUNTING(1) || (NC > 2 && COUNTING(NC - 1))) &&
		!BLOCKS(0) && !BLOCKS(1) && !(NC > 2 && BLOCKS(NC - 1)) ->
		tick1(0); tick1(1);
#if NC > 2
		tick1(2);
#endif
		END_STEP }
	od
}
#endif

/* nothing can move any more: nobody is left waiting or holding */
active proctype Quiet() {
	timeout -> assert(served)
}

init {
	d_step {
		for (hi : 0 .. NC - 1) { lsess[hi] = LIVE; srv[hi] = 1 }
		END_STEP
	}
	atomic {
		for (hk : 0 .. NC - 1) { run Client(hk) }
	}
}

/* With faults over and weak fairness, every Lock call ends: each waiter
 * gets the lock (and releases it) or gives up. */
ltl all_served { <> [] served }
