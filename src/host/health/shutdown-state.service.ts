import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';

/**
 * Set when the service starts shutting down (SIGTERM): readiness answers 503 so load balancers
 * stop sending, and new /query requests are refused while the ones in flight finish.
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
