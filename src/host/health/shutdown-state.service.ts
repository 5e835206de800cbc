import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';

/**
 * Set when the service starts shutting down (SIGTERM), before the listener closes: from then on
 * every new request, readiness included and on kept-alive connections too, gets 503 in the error
 * envelope with `Connection: close` (the host's onRequest hook), while the ones in flight finish.
 */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  private draining = false;

  get isDraining(): boolean {
    return this.draining;
  }

  beforeApplicationShutdown(signal?: string): void {
    this.draining = true;
    new Logger('Shutdown').log(
      `${signal ?? 'Shutdown'}: finishing requests in flight, then closing`,
    );
  }
}
