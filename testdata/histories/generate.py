import struct
IDS = {"A": "00000000-0000-4000-8000-00000000000a", "B": "00000000-0000-4000-8000-00000000000b",
       "C": "00000000-0000-4000-8000-00000000000c", "A2": "00000000-0000-4000-8000-0000000000a2"}
NAMES = {"A": "a", "B": "b", "C": "c", "A2": "a"}
def causes(*es):  # es: (topic, offset) on partition 0
    if not es: return "nil"
    es = sorted(es, key=lambda e: IDS[e[0]])
    b = bytes([1, len(es)])
    for t, o in es:
        b += bytes.fromhex(IDS[t].replace("-", "")) + bytes([1, 0]) + struct.pack(">q", o)
    return '"' + b.hex() + '"'
def ch(t): return '["%s" 0]' % IDS[t]
def pos(d): return "{" + ", ".join("%s %d" % (ch(t), o) for t, o in d.items()) + "}"
def export(name, rule, note, topics, logstart, records, trace, steps):
    out = ['; A directed scenario of causalctl (internal/history), written in Parsley\'s export format.',
           '; Rule: %s. %s' % (rule, note),
           '{:format 1', ' :source :causalctl-scenario', ' :seed 0', ' :sabotage :NONE', ' :rule :%s' % rule]
    out.append(' :topics [' + "\n  ".join('{:id "%s", :name "%s", :partitions 1, :alive %s, :log-start {0 %d}}' % (IDS[t], NAMES[t], "true", logstart.get(t, 0)) for t in topics) + ']')
    out.append(' :tasks [{:process "p", :task 0}]')
    out.append(' :records [' + "\n  ".join('{:topic "%s", :partition 0, :offset %d, :uid "%s%d", :causes %s}' % (IDS[t], o, NAMES[t], o, causes(*c)) for t, o, c in records) + ']')
    out.append(' :trace [' + "\n  ".join('{:process "p", :task 0, :channel %s, :offset %d, :uid "%s%d"}' % (ch(t), o, NAMES[t], o) for t, o in trace) + ']')
    reads, faults, statuses = [], [], []
    for i, s in enumerate(steps):
        if s[0] == "read":
            ends = ', :ends-lo {"p" %d}' % s[3] if len(s) > 3 else ""
            reads.append('{:index %d, :process "p", :task 0, :exec-start %s, :next-read %s%s}' % (i, pos(s[1]), pos(s[2]), ends))
        elif s[0] == "status":
            statuses.append('{:index %d, :process "p", :lifecycle :%s, :refusal nil, :trace-ends {"p" %d}}' % (i, s[1], s[2]))
        elif s[0] == "kill":
            faults.append('{:index %d, :kind :kill, :details {:channel %s, :topic "%s"}}' % (i, ch(s[1]), NAMES[s[1]]))
        elif s[0] == "recreate":
            faults.append('{:index %d, :kind :recreate, :details {:process "p", :topic "%s", :old "%s", :new "%s"}}' % (i, NAMES[s[1]], IDS[s[1]], IDS[s[2]]))
        elif s[0] == "truncate":
            faults.append('{:index %d, :kind :truncate, :details {:channel %s, :log-start %d}}' % (i, ch(s[1]), s[2]))
    out.append(' :reads [' + "\n  ".join(reads) + ']')
    if statuses:
        out.append(' :statuses [' + "\n  ".join(statuses) + ']')
    out.append(' :faults [' + "\n  ".join(faults) + ']}')
    open(name + ".edn", "w").write("\n".join(out) + "\n")

export("scope-change", "scope-change", "A channel declared in a later execution joins the scope, seeded at its committed position (b/0 at 1: b@0 is never delivered).",
       ["A", "B"], {}, [("A", 0, []), ("B", 0, []), ("B", 1, [])], [("A", 0), ("B", 1)],
       [("read", {"A": 0}, {"A": 1}), ("read", {"A": 1, "B": 1}, {"A": 1, "B": 2})])
export("restart-resume", "restart-resume", "A record held when the process stops is in its ordering state: the restart delivers it once its cause arrives; the rewind of a/0 and b/0 to 0 delivers nothing again.",
       ["A", "B"], {}, [("A", 0, [("B", 0)]), ("A", 1, []), ("B", 0, [])], [("B", 0), ("A", 0), ("A", 1)],
       [("read", {"A": 0, "B": 0}, {"A": 1, "B": 0}), ("read", {"A": 1, "B": 0}, {"A": 1, "B": 1}), ("read", {"A": 0, "B": 0}, {"A": 2, "B": 1})])
export("removed-with-held", "removed-with-held", "The declaration drops a/0 while it holds a@0: the start is refused (CHANNEL_REMOVED_WITH_HELD_MESSAGES) and b@0 is not delivered.",
       ["A", "B"], {}, [("A", 0, [("B", 0)]), ("B", 0, [])], [],
       [("read", {"A": 0, "B": 0}, {"A": 1, "B": 0}), ("read", {"B": 0}, {"B": 1})])
export("dead-channel", "dead-channel", "a is deleted while a/0 holds a@0: the task refuses at once (CHANNEL_DELETED_WITH_UNDELIVERED_MESSAGES) and delivers neither c@0 nor a@0.",
       ["A", "C"], {}, [("A", 0, [("C", 0)]), ("C", 0, [])], [],
       [("read", {"A": 0, "C": 0}, {"A": 1, "C": 0}), ("kill", "A"), ("read", {"A": 0, "C": 0}, {"A": 1, "C": 1})])
export("identity-change", "identity-change", "a is deleted and recreated under its name: the next start, bound to the old topic ID, is refused (CHANNEL_IDENTITY_CHANGED); the new a@0 is not delivered.",
       ["A", "A2"], {}, [("A", 0, []), ("A2", 0, [])], [("A", 0)],
       [("read", {"A": 0}, {"A": 1}), ("recreate", "A", "A2"), ("read", {"A2": 0}, {"A2": 1})])
export("truncation", "truncation", "Retention moved a/0's log start to 2 past the committed position 0: reading a/0 on from 0 crosses the discarded positions, so the task refuses (POSITIONS_DISCARDED_UNREAD) and delivers nothing.",
       ["A"], {}, [("A", 2, []), ("A", 3, [])], [],
       [("truncate", "A", 2), ("read", {"A": 0}, {"A": 4})])
export("refusal-resume", "refusal-resume", "The second execution drops a/0 while it holds a@0 and is refused: it reads nothing. The third declares a/0 again, passes the check and resumes from the state the refusal left: b@0, then the held a@0.",
       ["A", "B"], {}, [("A", 0, [("B", 0)]), ("B", 0, [])], [("B", 0), ("A", 0)],
       [("read", {"A": 0, "B": 0}, {"A": 1, "B": 0}), ("read", {"B": 0}, {"B": 1}), ("read", {"A": 1, "B": 0}, {"A": 1, "B": 1})])
export("join-clamp", "join-clamp", "a@0, delivered while b/0 is outside the scope, names b@1: when b/0 joins at 0 it is read above 1, so b@0 and b@1, causes of what the task delivered, are never delivered after it.",
       ["A", "B"], {}, [("A", 0, [("B", 1)]), ("B", 0, []), ("B", 1, [])], [("A", 0)],
       [("read", {"A": 0}, {"A": 1}), ("read", {"A": 1, "B": 0}, {"A": 1, "B": 2})])
export("step-paced", "step-paced", "a@0 is deliverable when read (b/0 is outside the scope) but the trace counts show no delivery before the execution ends: it stays held, b/0 joins, and it is delivered after b@0.",
       ["A", "B"], {}, [("A", 0, [("B", 0)]), ("B", 0, [])], [("B", 0), ("A", 0)],
       [("read", {"A": 0}, {"A": 1}, 0), ("status", "STOPPED", 0), ("read", {"A": 1, "B": 0}, {"A": 1, "B": 0}, 0), ("read", {"A": 1, "B": 0}, {"A": 1, "B": 1}, 2)])
