# Compares two run stores table by table (run paths, times and wall-clock fields masked) and their
# checkpoint files byte for byte; exit 1 when anything differs. Usage: compare-runs.py RUN_DIR_A RUN_DIR_B
# A table of A that B no longer has is a difference, except skill_events: B derives it from the
# outbox's mastery events (src/run/records/store.ts, skillEvents), which must then equal A's rows.
import sqlite3, sys, os, hashlib, re, json
a, b = sys.argv[1], sys.argv[2]
def mask(v):
    v = v.replace(a, 'RUN').replace(b, 'RUN')
    v = re.sub(r'\d{4}-\d\d-\d\dT[\d:.]+Z', 'T', v)
    return re.sub(r'\\?"(ms|wallMs|seconds)\\?":[\d.e+-]+', 'MS', v)
def around(p, q):
    # the two values around their first difference, so a long JSON shows where it differs
    i = next((i for i, (c, d) in enumerate(zip(p, q)) if c != d), min(len(p), len(q)))
    return p[max(0, i - 60):i + 60], q[max(0, i - 60):i + 60]
def rows(db, t):
    c = sqlite3.connect(os.path.join(db, 'run.db'))
    cols = [r[1] for r in c.execute(f'pragma table_info({t})')]
    keep = [x for x in cols if not re.search(r'(time|_at$|^at$|wall|ms$|seconds|created|started|run_id|^run$|elapsed|per_sec|/s)', x)]
    out = []
    for r in c.execute(f'select {",".join(chr(34)+k+chr(34) for k in keep)} from {t}'):
        out.append(tuple(mask(str(v)) for v in r))
    return keep, out
def tables(db):
    return [n for (n,) in sqlite3.connect(os.path.join(db, 'run.db')).execute("select name from sqlite_master where type='table' order by name")]
def derived_skill_events(db):
    c = sqlite3.connect(os.path.join(db, 'run.db'))
    evs = [json.loads(e) for (e,) in c.execute('select event from outbox order by seq')]
    return [(str(e['step']), e['skillId'], e['event'], str(e['accuracy'])) for e in evs if e['kind'] == 'mastery']
bad = 0
in_b = set(tables(b))
for t in tables(a):
    if t not in in_b:
        if t == 'skill_events':
            _, ra = rows(a, t)
            same = [r[1:5] for r in ra] == derived_skill_events(b)  # id, then step, skill_id, event, accuracy
            if not same: bad += 1
            print(f'{t:22} {len(ra):6} rows  {"same as the mastery events of the outbox" if same else "DIFFERENT from the mastery events of the outbox"}')
        else:
            bad += 1
            print(f'{t:22} missing')
        continue
    ka, ra = rows(a, t); kb, rb = rows(b, t)
    same = ka == kb and ra == rb
    if not same: bad += 1
    print(f'{t:22} {len(ra):6} rows  {"same" if same else "DIFFERENT"}')
    if not same and len(ra) == len(rb):
        for x, y in zip(ra, rb):
            if x != y: print('   ', [(k, *around(p, q)) for k, p, q in zip(ka, x, y) if p != q][:4]); break
for d in sorted(os.listdir(os.path.join(a, 'checkpoints'))):
    for f in sorted(os.listdir(os.path.join(a, 'checkpoints', d))):
        h = [hashlib.sha256(open(os.path.join(x, 'checkpoints', d, f), 'rb').read()).hexdigest()[:12] for x in (a, b)]
        if h[0] != h[1]: bad += 1
        print(f'{d}/{f:24} {"same" if h[0]==h[1] else "DIFFERENT"}')
sys.exit(1 if bad else 0)
