/**
 * The profile's token: cached, fetched from one tab at a time (single flight, the preferred tab
 * first, the next one if it does not answer), and refreshed before it expires. So a profile
 * asks for a token once, however many tabs it has.
 */

/** A tab's `getToken`. */
export type TokenProvider = () => string | Promise<string>;

const TOKEN_TIMEOUT_MS = 10_000;

/** @internal */
export class TokenSource {
  private token: string | undefined;
  private flight: Promise<string | undefined> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    /** Providers to ask, best first. */
    private readonly providers: () => TokenProvider[],
    /** Refresh this often besides before expiry (0: only before expiry). */
    private readonly everyMs: number,
    /** Sends a refreshed token to the server. */
    private readonly refreshed: (token: string) => void,
  ) {}

  /** The cached token, else one asked of a tab; `force` always asks. Undefined: no provider. */
  get(force = false): Promise<string | undefined> {
    if (!force && this.token !== undefined) return Promise.resolve(this.token);
    if (this.flight) return this.flight;
    const providers = this.providers();
    if (providers.length === 0) return Promise.resolve(undefined);
    this.flight = (async () => {
      let lastError: unknown;
      for (const provider of providers) {
        try {
          this.token = await withTimeout(Promise.resolve().then(provider), TOKEN_TIMEOUT_MS);
          return this.token;
        } catch (err) {
          // A tab that closed never answers; ask the next one.
          lastError = err;
        }
      }
      throw lastError;
    })().finally(() => {
      this.flight = undefined;
    });
    return this.flight;
  }

  /** The server refused the cached token: the next `get()` asks a tab. */
  forget(): void {
    this.token = undefined;
  }

  /** Gets a fresh token and hands it to the server. */
  async refresh(): Promise<void> {
    // A provider that fails keeps the current token; when it expires the server asks again.
    const token = await this.get(true).catch(() => undefined);
    if (token !== undefined) this.refreshed(token);
  }

  /** Plans the next refresh: at 80% of the remaining life, or on the period, whichever is first. */
  schedule(expiresAt: number | undefined): void {
    this.stop();
    const byExpiry = expiresAt !== undefined ? Math.max(1_000, (expiresAt - Date.now()) * 0.8) : Infinity;
    const delay = Math.min(byExpiry, this.everyMs > 0 ? this.everyMs : Infinity);
    if (delay !== Infinity) this.timer = setTimeout(() => void this.refresh(), delay);
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
