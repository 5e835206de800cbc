// One board of `entries` entries for space 1 (all-time), written straight into the service's
// tables: many ties (5,000 distinct point values, times on whole minutes), addresses in order.
// With `profiles`, each address also gets a profile row, one in ten with a name.
/* eslint-disable */

/** Fills the board through the app's data source; answers the milliseconds it took. */
async function fillBoard(ds, { entries, kind, profiles = false }) {
  const started = Date.now();
  await ds.query('INSERT INTO spaces (id, name) VALUES (1, ?)', ['Bench']);
  for (let start = 0; start < entries; start += 2000) {
    const n = Math.min(2000, entries - start);
    const rows = [];
    const people = [];
    for (let i = 0; i < n; i++) {
      const k = start + i;
      const key = `0x${k.toString(16).padStart(40, '0')}`;
      rows.push(1, 0, key, 1 + ((k * 7919) % 5000), 1_700_000_000_000 + (k % 100_000) * 60_000);
      people.push(key, key.toUpperCase().replace('0X', '0x'), k % 10 === 0 ? `user ${k}` : null);
    }
    await ds.query(
      `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at) VALUES ${new Array(n).fill('(?, ?, ?, ?, ?)').join(', ')}`,
      rows,
    );
    if (profiles)
      await ds.query(
        `INSERT INTO profiles (address_key, address, username) VALUES ${new Array(n).fill('(?, ?, ?)').join(', ')}`,
        people,
      );
  }
  await ds.query('INSERT INTO boards (space_id, sprint_id, entry_count) VALUES (1, 0, ?)', [
    entries,
  ]);
  const tables = profiles ? 'board_entries, profiles' : 'board_entries';
  await ds.query(kind === 'sqlite' ? 'ANALYZE' : `ANALYZE TABLE ${tables}`);
  return Date.now() - started;
}

/** `--name value` from the command line, or `fallback`. */
function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}

module.exports = { arg, fillBoard };
