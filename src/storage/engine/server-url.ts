/** For messages and logs: a URL with its password replaced. */
export function redact(url: string): string {
  // The authority ends at the last "@" before the path, as URL parsers read it.
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i.exec(url);
  if (!match || !match[2].includes(':')) return url;
  const user = match[2].slice(0, match[2].indexOf(':'));
  return `${match[1]}${user}:***@${url.slice(match[0].length)}`;
}

/** A server's URL, parsed; one that cannot be read is refused without its password. */
export function readServerUrl(url: string, example: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new Error(`DATABASE_URL: cannot read "${redact(url)}"; expected ${example}`);
  }
}
