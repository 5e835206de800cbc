/** Addresses are compared case-insensitively: they are keyed by their lower-cased form. */
export function addressKeyOf(address: string): string {
  return address.toLowerCase();
}
