import { setTimeout as sleep } from 'node:timers/promises';
import { missingPrerequisites, startTopology, Topology } from '../../scripts/scale-out';

/*
 * The scale-out topology of deploy/compose.yaml, from local processes (scripts/scale-out.js): a
 * private MariaDB primary and GTID replica, the machine's Redis, three instances of the built
 * service and haproxy with deploy/haproxy.cfg. Needs dist/ (the test command builds first),
 * mariadbd and haproxy: without them this spec fails, saying what is missing.
 */

// A budget small enough to spend in a second, large enough for the reads the other cases make.
const QUERY_BUDGET = 90;
const PAGE = `query($space: Int!, $after: String) { space(id: $space) {
  loyaltyPointsRanks(first: 1000, cursorAfter: $after) {
    totalCount pageInfo { hasNextPage endCursor } list { rank points address { address } } } } }`;

const points = (key: string, space: number, address: string, value: number) => ({
  type: 'points',
  key,
  spaceId: space,
  address,
  points: value,
  occurredAt: '2026-03-02T12:00:00Z',
});

/** haproxy's own answer, in the service's error envelope (deploy/haproxy.cfg). */
const balancerEnvelope = (code: string, message: string, category: string, status: number) => ({
  errors: [
    {
      message,
      extensions: {
        code,
        category,
        http_status: status,
        request_id: expect.stringMatching(/^[0-9A-F]+/),
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    },
  ],
});
describe('the scale-out topology (three instances, haproxy, Redis, MariaDB primary and replica)', () => {
  let topology: Topology;
  let writer: string;

  /** A fresh token (its own rate-limit budget), made with the operator's CLI. */
  async function token(name: string, scopes: string): Promise<string> {
    const created = await topology.cli(['token', 'create', '--name', name, '--scope', scopes]);
    if (created.code !== 0) throw new Error(`token create failed: ${created.stderr}`);
    return created.stdout.trim();
  }

  async function ingest(base: string, records: unknown[]) {
    const response = await fetch(`${base}/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': writer },
      body: JSON.stringify(records),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  async function query(base: string, reader: string, body: string, variables = {}) {
    const response = await fetch(`${base}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': reader },
      body: JSON.stringify({ query: body, variables }),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  /** A space's whole all-time board on one instance: points by address. */
  async function board(base: string, reader: string, space: number): Promise<Map<string, number>> {
    const entries = new Map<string, number>();
    let after: string | null = null;
    for (;;) {
      const page = await query(base, reader, PAGE, { space, after });
      expect(page.status).toBe(200);
      const ranks = page.body.data.space.loyaltyPointsRanks;
      for (const entry of ranks.list) entries.set(entry.address.address, entry.points);
      if (!ranks.pageInfo.hasNextPage) return entries;
      after = ranks.pageInfo.endCursor;
    }
  }

  /** Polls `read` until `done` holds of its value, up to 10 s; answers the last value either way. */
  async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    const until = Date.now() + 10_000;
    let value = await read();
    while (!done(value) && Date.now() < until) {
      await sleep(100);
      value = await read();
    }
    return value;
  }

  const has = (entries: Map<string, number>, expected: Map<string, number>) =>
    [...expected].every(([address, value]) => entries.get(address) === value);

  beforeAll(async () => {
    const missing = missingPrerequisites();
    if (missing.length > 0) {
      throw new Error(
        `The scale-out topology test needs: ${missing.join('; ')}. .ci/run installs haproxy; ` +
          'the test command builds dist/.',
      );
    }
    topology = await startTopology({
      instances: 3,
      env: { RATE_LIMIT_TOKEN: `${QUERY_BUDGET}/1m`, RATE_LIMIT_INGEST: '100000/1s' },
      log: () => undefined,
    });
    writer = await token('scale-out writer', 'query,ingest');
    const spaces = [1, 2].map((id) => ({ type: 'space', id, name: `Scale-out ${id}` }));
    const created = await ingest(topology.balancer!.url, spaces);
    expect(created.body).toMatchObject({ accepted: 2, refused: 0 });
  }, 180_000);

  afterAll(() => topology?.stop(), 60_000);

  it('serves health, the API and the dashboard through the balancer, and nothing else', async () => {
    const base = topology.balancer!.url;
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    const reader = await token('scale-out health', 'query');
    expect((await query(base, reader, '{ __typename }')).body).toEqual({
      data: { __typename: 'Query' },
    });
    expect((await fetch(`${base}/dashboard`, { redirect: 'manual' })).status).toBeLessThan(400);
    const unknown = await fetch(`${base}/not-a-route`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual(
      balancerEnvelope('NOT_FOUND', 'Not found', 'NOT_FOUND', 404),
    );
  });

  it('reads on every instance what was written through any one, and its cursors', async () => {
    const reader = await token('scale-out reads', 'query');
    const expected = new Map<string, number>();
    const writes = [
      ...topology.instances.map((instance, i) => ({ via: instance.url, address: `0xA${i}` })),
      { via: topology.balancer!.url, address: '0xAB' },
    ];
    for (const [i, write] of writes.entries()) {
      const value = 10 * (i + 1);
      const answer = await ingest(write.via, [points(`a-${i}`, 1, write.address, value)]);
      expect(answer).toMatchObject({ status: 200, body: { accepted: 1 } });
      expected.set(write.address, value);
      if (write.via !== topology.balancer!.url) {
        // The instance that acknowledged it shows it at once, without waiting for its feed.
        expect((await board(write.via, reader, 1)).get(write.address)).toBe(value);
      }
    }
    for (const instance of topology.instances) {
      const seen = await eventually(
        () => board(instance.url, reader, 1),
        (b) => has(b, expected),
      );
      expect(Object.fromEntries(seen)).toEqual(Object.fromEntries(expected));
    }

    // One CURSOR_SECRET: a cursor one instance signed pages on another.
    const [first, second] = topology.instances;
    const PAIR = `query($after: String) { space(id: 1) { loyaltyPointsRanks(first: 2, cursorAfter: $after) {
      pageInfo { endCursor } list { rank address { address } } } } }`;
    const page1 = await query(first.url, reader, PAIR);
    const cursor = page1.body.data.space.loyaltyPointsRanks.pageInfo.endCursor;
    const page2 = await query(second.url, reader, PAIR, { after: cursor });
    expect(page2.body.data.space.loyaltyPointsRanks.list.map((e: any) => e.rank)).toEqual([3, 4]);
  });

  it('holds one rate-limit budget across the instances (Redis)', async () => {
    const reader = await token('scale-out budget', 'query');
    const statuses: number[] = [];
    for (let i = 0; i < QUERY_BUDGET; i++) {
      const instance = topology.instances[i % topology.instances.length];
      statuses.push((await query(instance.url, reader, '{ __typename }')).status);
    }
    // Each instance saw a third of the budget: alone, none of them would refuse anything yet.
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    for (const instance of topology.instances) {
      const refused = await query(instance.url, reader, '{ __typename }');
      expect(refused.status).toBe(429);
      expect(refused.body.errors[0].extensions.code).toBe('RATE_LIMIT_EXCEEDED');
    }
  });

  it('loses no acknowledged record when an instance is killed mid-way, and the replica has them all', async () => {
    const BATCHES = 160;
    const BATCH = 10;
    const victim = topology.instances[1];
    const acknowledged = new Map<string, number>();
    let acknowledgedAfterKill = 0;
    let failed = 0;
    let sent = 0;
    const kill = { done: Promise.resolve(), gone: false };

    async function client(): Promise<void> {
      while (sent < BATCHES) {
        const batch = sent++;
        if (batch === BATCHES / 4)
          kill.done = victim.kill('SIGKILL').then(() => void (kill.gone = true));
        const startedAfterKill = kill.gone;
        const records = Array.from({ length: BATCH }, (_, i) =>
          points(`c-${batch}-${i}`, 2, `0xC${batch}x${i}`, 1 + ((batch * BATCH + i) % 97)),
        );
        const answer = await ingest(topology.balancer!.url, records).catch(() => null);
        if (answer && answer.status >= 200 && answer.status < 300) {
          expect(answer.body).toMatchObject({ accepted: BATCH, refused: 0 });
          for (const r of records) acknowledged.set(r.address, r.points);
          if (startedAfterKill) acknowledgedAfterKill++;
        } else failed++;
      }
    }
    await Promise.all(Array.from({ length: 4 }, client));
    await kill.done;
    expect(victim.running).toBe(false);
    // The balancer went on: batches were acknowledged before the kill and sent after it.
    expect(acknowledged.size).toBeGreaterThan(0);
    expect(acknowledgedAfterKill).toBeGreaterThan(0);
    expect(acknowledged.size / BATCH + failed).toBe(BATCHES);

    await victim.start();
    const reader = await token('scale-out after kill', 'query');
    for (const instance of topology.instances) {
      const seen = await eventually(
        () => board(instance.url, reader, 2),
        (b) => has(b, acknowledged),
      );
      const lost = [...acknowledged].filter(([address, value]) => seen.get(address) !== value);
      expect({ instance: instance.name, lost }).toEqual({ instance: instance.name, lost: [] });
    }

    // The replica applies what the primary committed: every acknowledged record is there too.
    const keys = (rows: Array<{ event_key: string }>) => new Set(rows.map((r) => r.event_key));
    const onPrimary = keys(
      await topology.sql('primary', 'SELECT event_key FROM points_events WHERE space_id = 2'),
    );
    const onReplica = await eventually(
      async () =>
        keys(
          await topology.sql('replica', 'SELECT event_key FROM points_events WHERE space_id = 2'),
        ),
      (replicated) => replicated.size === onPrimary.size,
    );
    expect(onReplica).toEqual(onPrimary);
    expect(onPrimary.size).toBeGreaterThanOrEqual(acknowledged.size);
  });

  it('replicates a row written on the primary to the replica', async () => {
    await topology.sql(
      'primary',
      "INSERT INTO spaces (id, name) VALUES (99, 'written on the primary')",
    );
    const rows = await eventually(
      () => topology.sql('replica', 'SELECT name FROM spaces WHERE id = 99'),
      (found: unknown[]) => found.length === 1,
    );
    expect(rows).toEqual([{ name: 'written on the primary' }]);
  });

  it('loads rank indexes from the replica, yet shows an instance its own writes at once', async () => {
    const reader = await token('scale-out replica', 'query');
    const selects = async () => {
      const [row] = await topology.sql('replica', "SHOW GLOBAL STATUS LIKE 'Com_select'");
      return Number(row.Value);
    };
    await ingest(topology.balancer!.url, [{ type: 'space', id: 3, name: 'Scale-out 3' }]);
    await ingest(topology.balancer!.url, [points('r-1', 3, '0xD1', 5)]);
    const before = await selects();
    // A new board: each instance's first page starts loading its index, from the replica.
    for (const instance of topology.instances) {
      const loaded = await eventually(
        () => board(instance.url, reader, 3),
        (b) => b.get('0xD1') === 5,
      );
      expect(loaded.get('0xD1')).toBe(5);
    }
    const read = await eventually(selects, (count) => count >= before + topology.instances.length);
    expect(read).toBeGreaterThanOrEqual(before + topology.instances.length);

    // The replica stops applying: each instance still shows what it acknowledged, at once.
    await topology.sql('replica', 'STOP SLAVE SQL_THREAD');
    try {
      for (const [i, instance] of topology.instances.entries()) {
        const address = `0xD${i + 2}`;
        const answer = await ingest(instance.url, [points(`r-${i + 2}`, 3, address, 50 + i)]);
        expect(answer).toMatchObject({ status: 200, body: { accepted: 1 } });
        expect((await board(instance.url, reader, 3)).get(address)).toBe(50 + i);
      }
      const [{ behind }] = await topology.sql(
        'replica',
        "SELECT COUNT(*) AS behind FROM board_entries WHERE space_id = 3 AND address_key = '0xd2'",
      );
      expect(Number(behind)).toBe(0);
    } finally {
      await topology.sql('replica', 'START SLAVE SQL_THREAD');
    }
  });
  // Last: it stops every instance.
  it('answers in the error envelope with Retry-After when no instance can answer', async () => {
    const base = topology.balancer!.url;
    await Promise.all(topology.instances.map((instance) => instance.kill()));
    const answer = await eventually(
      () => fetch(`${base}/query`, { method: 'POST', body: '{}' }),
      (response) => response.status === 503,
    );
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(await answer.json()).toEqual(
      balancerEnvelope(
        'SERVICE_UNAVAILABLE',
        'Service temporarily unavailable: no instance can answer right now; retry shortly',
        'UNAVAILABLE',
        503,
      ),
    );
  });
});
