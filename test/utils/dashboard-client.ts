/** A browser-like client for the dashboard: keeps cookies, reads the CSRF token of a form. */
export class DashboardClient {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly base: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(
    path: string,
    init: RequestInit & { form?: Record<string, string | string[]>; json?: unknown } = {},
  ) {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', this.cookieHeader());
    let body = init.body;
    if (init.form) {
      headers.set('content-type', 'application/x-www-form-urlencoded');
      // A list is a repeated field, as a browser sends checkboxes of one name.
      body = new URLSearchParams(
        Object.entries(init.form).flatMap(([name, value]) =>
          (Array.isArray(value) ? value : [value]).map((one): [string, string] => [name, one]),
        ),
      ).toString();
    }
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(init.json);
    }
    const response = await fetch(`${this.base}${path}`, {
      ...init,
      headers,
      body,
      redirect: 'manual',
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (/Max-Age=0/.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      setCookies: response.headers.getSetCookie(),
    };
  }

  /** The hidden _csrf value of the page at `path`. */
  async formToken(path: string): Promise<string> {
    const page = await this.request(path);
    const match = /name="_csrf" value="([^"]+)"/.exec(page.text);
    if (!match) throw new Error(`no CSRF field on ${path} (status ${page.status})`);
    return match[1];
  }

  async signIn(email: string, password: string) {
    const csrf = await this.formToken('/dashboard/sign-in');
    return this.request('/dashboard/sign-in', {
      method: 'POST',
      form: { _csrf: csrf, email, password },
    });
  }

  async csrfToken(): Promise<string> {
    const session = await this.request('/dashboard/session');
    return (JSON.parse(session.text) as { csrfToken: string }).csrfToken;
  }
}
