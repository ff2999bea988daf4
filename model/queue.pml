/*
 * queue.pml: the claim protocol of the WorkQueue (package queue: Kazoo's
 * LockingQueue layout, entries/<entry> and ephemeral taken/<entry>
 * claims): claim, process, acknowledge, with the settling of a claim or
 * an acknowledgement whose reply is lost, and of a Take whose context
 * ends while its claim is in flight.
 *
 * Size: NI items put by a producer; NT takers (goroutines): takers 0 and 1
 * share session 0 (one WorkQueue used by two goroutines), taker 2, if
 * NT = 3, has session 1. FAULTS faults at most: a lost request, a lost
 * reply, a Take's context ending while its claim is in flight, a process
 * crash, a pause of any length. A crashed process restarts with a new
 * session once the server has expired the old one.
 *
 * Broken variants (each must yield a counterexample):
 *   -DCALLER_CTX  the claim is sent with the caller's context: when the
 *                 context ends while it is in flight, Take returns and
 *                 nobody settles the outcome; the transaction may commit
 *   -DSHARED_TAG  the claim's data is one id per WorkQueue, as before
 *                 claims were exact: goroutines sharing it settle on each
 *                 other's claims
 *
 * Each step is one d_step: one ZooKeeper request or multi, or one local
 * decision, named in the comment above it as file.go function. A request
 * travels in a slot of its own (rq): sent, applied by the server, replied
 * or lost, so every interleaving of requests and faults is covered.
 *
 * Abstractions: reads that settle an outcome follow a sync, so they see
 * the server's state (the model's reads are linearizable); a Take claims
 * one item (a batch is all or nothing, settled by its first claim: the
 * same protocol); the listing a taker works from is read in the step that
 * sends the claim (a stale listing only makes a claim fail, which the
 * model covers through another taker's claim); a claim's unique id is the
 * taker's index (a taker has one claim under way at a time; its earlier
 * claims are acknowledged, given back or gone with its session).
 */

#ifndef NI
#define NI 2
#endif
#ifndef NT
#define NT 2
#endif
#ifndef FAULTS
#define FAULTS 2
#endif

#define SID(t) (t / 2)
#define NS     ((NT + 1) / 2)

#ifdef SHARED_TAG
#define TAG(t) (SID(t) + 1)
#else
#define TAG(t) (t + 1)
#endif

/* taker states */
#define IDLE  0 /* no Take under way */
#define CLAIM 1 /* claim transaction sent (work.go send/attempt) */
#define HOLD  2 /* a Claim: processing the item */
#define ACK   3 /* acknowledgement sent (claim.go Ack) */
#define GIVE  4 /* claim to be given back: a Take that gave up (work.go dropAll) */
#define DEAD  5 /* its process crashed, or its session ended */

/* request slot */
#define NONE 0
#define SENT 1 /* on its way: the server may apply it */
#define OK   2 /* applied; reply on its way */
#define FAIL 3 /* refused (NodeExists, NoNode); reply on its way */
#define LOST 4 /* connection lost: outcome unknown to the taker */

/* ---- ZooKeeper ---- */
bit  entry[NI];  /* entries/<entry>, persistent */
byte marker[NI]; /* taken/<entry>: the claim's tag, 0 if absent */
byte mses[NI];   /* the marker's session + 1 (ephemeral owner) */
bit  srv[NS];    /* the session lives at the server */

/* ---- each taker ---- */
byte st[NT];
byte it[NT];     /* its item */
byte rq[NT];     /* its request slot */
bit  bg[NT];     /* its Take returned (ctx ended): outcome settled in the background */
bit  forgot[NT]; /* CALLER_CTX: nobody awaits the reply of its request */
bit  stale[NT];  /* ghost: its session expired while it was paused holding */

/* ---- each session's process ---- */
bit  up[NS];     /* the process runs (not crashed) */
bit  paused[NS];

byte put;        /* items put so far */
byte ackok[NI];  /* ghost: acknowledgements reported done to a caller */
byte budget = FAULTS;

hidden byte hi, hj, hk;

#define FREE(i)  (entry[(i) % NI] && marker[(i) % NI] == 0)
#define ANYFREE  (FREE(0) || FREE(1) || FREE(2))

#define RUNS(t)  (up[SID(t)] && !paused[SID(t)] && st[t] != DEAD)
#define REACH(t) (RUNS(t) && srv[SID(t)])

/* Invariant: an item is held by at most one claim among takers whose
 * process runs and whose claim did not end behind their back. */
inline check() {
	for (hi : 0 .. NI - 1) {
		hk = 0;
		for (hj : 0 .. NT - 1) {
			if
			:: (st[hj] == HOLD || st[hj] == ACK) && it[hj] == hi && up[SID(hj)] && !paused[SID(hj)] && !stale[hj] -> hk++
			:: else -> skip
			fi
		}
		assert(hk <= 1)
	}
}

#define END_STEP check(); skip

/* claim.go Ack reports success: the item's work is done, once. */
inline acked(i) {
	ackok[i]++;
	assert(ackok[i] <= 1)
}

inline idle(t) {
	st[t] = IDLE; bg[t] = 0
}

/* A taker is done with its outcome: a Take that gave up gives back a
 * claim that turned out to exist (work.go send), others hold it. */
inline claimed(t) {
	if
	:: bg[t] -> st[t] = GIVE
	:: else -> st[t] = HOLD
	fi
}

proctype Taker(byte t) {
end:
	do
	/* work.go next, send: list, then send the claim transaction for an
	 * unclaimed entry */
	:: d_step { REACH(t) && st[t] == IDLE && rq[t] == NONE && ANYFREE ->
		hk = NI;
		for (hi : 0 .. NI - 1) {
			if :: FREE(hi) && hk == NI -> hk = hi :: else -> skip fi
		}
		it[t] = hk; rq[t] = SENT; st[t] = CLAIM;
		END_STEP }
	/* work.go send: the reply: claimed, or refused (another consumer's) */
	:: d_step { RUNS(t) && st[t] == CLAIM && (rq[t] == OK || rq[t] == FAIL) ->
		if
		:: rq[t] == OK -> claimed(t)
		:: else -> idle(t)
		fi;
		rq[t] = NONE; END_STEP }
	/* work.go attempt, holds: the reply is lost; after a sync, the
	 * claim's marker holds its tag if and only if the claim committed */
	:: d_step { REACH(t) && st[t] == CLAIM && rq[t] == LOST ->
		rq[t] = NONE;
		if
		:: marker[it[t]] == TAG(t) -> claimed(t)
		:: else -> idle(t)
		fi;
		END_STEP }
	/* the Take's context ends while its claim is in flight */
	:: d_step { RUNS(t) && st[t] == CLAIM && !bg[t] && budget > 0 ->
		budget--;
#ifndef CALLER_CTX
		/* work.go send: Take returns ctx's error; the outcome is
		 * awaited in the background */
		bg[t] = 1;
#else
		/* Take returns ctx's error; nobody awaits the outcome */
		forgot[t] = 1; idle(t);
#endif
		END_STEP }
	/* CALLER_CTX: the reply of a forgotten request is dropped */
	:: d_step { RUNS(t) && forgot[t] && rq[t] != SENT && rq[t] != NONE ->
		forgot[t] = 0; rq[t] = NONE; END_STEP }
	/* work.go dropAll: a claim whose Take gave up is given back */
	:: d_step { REACH(t) && st[t] == GIVE ->
		if :: marker[it[t]] == TAG(t) -> marker[it[t]] = 0; mses[it[t]] = 0 :: else -> skip fi;
		idle(t); END_STEP }
	/* the consumer processes the item, then claim.go Ack sends the
	 * transaction deleting entry and claim */
	:: d_step { REACH(t) && st[t] == HOLD && rq[t] == NONE -> rq[t] = SENT; st[t] = ACK; END_STEP }
	/* claim.go Ack: the reply: done, or the claim was lost */
	:: d_step { RUNS(t) && st[t] == ACK && (rq[t] == OK || rq[t] == FAIL) ->
		if :: rq[t] == OK -> acked(it[t]) :: else -> skip fi;
		rq[t] = NONE; idle(t); END_STEP }
	/* claim.go Ack, holds: the reply is lost; after a sync, the claim
	 * still there: not applied, send again; gone with its entry: applied;
	 * gone, entry there: the claim was lost */
	:: d_step { REACH(t) && st[t] == ACK && rq[t] == LOST ->
		if
		:: marker[it[t]] == TAG(t) -> rq[t] = SENT
		:: marker[it[t]] != TAG(t) && !entry[it[t]] -> rq[t] = NONE; acked(it[t]); idle(t)
		:: else -> rq[t] = NONE; idle(t)
		fi;
		END_STEP }
	/* the session ended (the process learns it when it runs): every
	 * Take, Claim and Ack under way ends with it */
	:: d_step { RUNS(t) && !srv[SID(t)] ->
		st[t] = DEAD; rq[t] = NONE; bg[t] = 0; forgot[t] = 0; stale[t] = 0; END_STEP }
	od
}

/* the server applies a taker's request */
inline apply(t) {
	if
	:: st[t] == CLAIM || forgot[t] ->
		/* create taken/<entry> (ephemeral); NodeExists, NoNode refuse */
		if
		:: entry[it[t]] && marker[it[t]] == 0 ->
			marker[it[t]] = TAG(t); mses[it[t]] = SID(t) + 1; rq[t] = OK
		:: else -> rq[t] = FAIL
		fi
	:: else ->
		/* delete entries/<entry> and taken/<entry> */
		if
		:: entry[it[t]] && marker[it[t]] != 0 ->
			entry[it[t]] = 0; marker[it[t]] = 0; mses[it[t]] = 0; rq[t] = OK
		:: else -> rq[t] = FAIL
		fi
	fi
}

/* the server expires session s: its claims go */
inline expire(s) {
	srv[s] = 0;
	for (hi : 0 .. NI - 1) {
		if :: mses[hi] == s + 1 -> marker[hi] = 0; mses[hi] = 0 :: else -> skip fi
	}
	for (hj : 0 .. NT - 1) {
		if
		:: SID(hj) == s && paused[s] && (st[hj] == HOLD || st[hj] == ACK) -> stale[hj] = 1
		:: else -> skip
		fi;
		if :: SID(hj) == s && rq[hj] != NONE -> rq[hj] = LOST :: else -> skip fi
	}
}

#define SERVE(t) \
	:: d_step { rq[t] == SENT && srv[SID(t)] -> apply(t); END_STEP }

#define SESSION(s) \
	/* expiry: the process crashed or is paused */ \
	:: d_step { srv[s] && (!up[s] || paused[s]) -> expire(s); END_STEP }

active proctype Server() {
end:
	do
	SERVE(0)
	SERVE(1)
#if NT > 2
	SERVE(2)
#endif
	SESSION(0)
#if NS > 1
	SESSION(1)
#endif
	od
}

#define FAULT_TAKER(t) \
	/* the request is lost on its way */ \
	:: d_step { budget > 0 && rq[t] == SENT -> budget--; rq[t] = LOST; END_STEP } \
	/* the reply is lost with the connection */ \
	:: d_step { budget > 0 && (rq[t] == OK || rq[t] == FAIL) -> budget--; rq[t] = LOST; END_STEP }

inline restart(s) {
	up[s] = 1; srv[s] = 1;
	for (hj : 0 .. NT - 1) {
		if
		:: SID(hj) == s -> st[hj] = IDLE; rq[hj] = NONE; bg[hj] = 0; forgot[hj] = 0; stale[hj] = 0
		:: else -> skip
		fi
	}
}

#define FAULT_SESSION(s) \
	/* the process crashes */ \
	:: d_step { budget > 0 && up[s] -> budget--; up[s] = 0; paused[s] = 0; END_STEP } \
	/* it restarts with a new session once the old one has expired */ \
	:: d_step { !srv[s] && !paused[s] -> restart(s); END_STEP } \
	/* a pause of any length */ \
	:: d_step { budget > 0 && up[s] && !paused[s] -> budget--; paused[s] = 1; END_STEP } \
	:: d_step { paused[s] -> paused[s] = 0; END_STEP }

active proctype Env() {
end:
	do
	FAULT_TAKER(0)
	FAULT_TAKER(1)
#if NT > 2
	FAULT_TAKER(2)
#endif
	FAULT_SESSION(0)
#if NS > 1
	FAULT_SESSION(1)
#endif
	od
}

/* the producer puts the items, one after another (work.go Put) */
active proctype Producer() {
	do
	:: d_step { put < NI -> entry[put] = 1; put++; END_STEP }
	:: put == NI -> break
	od
}

/* Nothing can move any more (faults over): every item was put and
 * acknowledged, and no claim is left that no taker knows. */
active proctype Quiet() {
	timeout ->
	for (hi : 0 .. NI - 1) {
		assert(put == NI && !entry[hi] && marker[hi] == 0)
	}
}

init {
	d_step {
		for (hi : 0 .. NS - 1) { up[hi] = 1; srv[hi] = 1 }
		END_STEP
	}
	atomic {
		for (hk : 0 .. NT - 1) { run Taker(hk) }
	}
}

/* With faults over and weak fairness, every item is acknowledged and no
 * claim is left. */
#define alldone (put == NI && !entry[0] && marker[0] == 0 && (NI < 2 || (!entry[NI - 1] && marker[NI - 1] == 0)))
ltl all_acked { <> [] alldone }
