/**
 * Concurrent loads of one key share one promise: when a cached value expires under load, the
 * requests that miss together run one query, not one each. A load joins only a flight started in
 * the same `epoch` (a counter the caller moves on every write it knows of), so nobody is handed a
 * read that began before a write they must see.
 */
export class SingleFlight<K, V> {
  private readonly flights = new Map<K, { epoch: number; promise: Promise<V> }>();

  run(key: K, epoch: number, load: () => Promise<V>): Promise<V> {
    const flight = this.flights.get(key);
    if (flight && flight.epoch === epoch) return flight.promise;
    const entry = { epoch, promise: load() };
    this.flights.set(key, entry);
    const land = () => {
      if (this.flights.get(key) === entry) this.flights.delete(key);
    };
    entry.promise.then(land, land);
    return entry.promise;
  }

  /** Flights in the air (for tests). */
  get size(): number {
    return this.flights.size;
  }
}
