import type {
  LoyaltyObserver,
  SpaceWritten,
} from '../../../options/loyalty-module-options.interface';
import type { AuditService } from './audit.service';

/**
 * Space records POST /ingest applied (a new space, a rename, an alias), written to the audit
 * trail with the token as the actor, as the dashboard's own space changes are. The module hears of
 * them through its observer, made before the app (and so before the AuditService): bind() gives
 * it the service once the app exists; until then nothing is written (no request is served then).
 */
export class IngestSpaceAudit implements Pick<LoyaltyObserver, 'spacesWritten'> {
  private audit?: AuditService;

  bind(audit: AuditService): void {
    this.audit = audit;
  }

  spacesWritten(spaces: readonly SpaceWritten[], by: { tokenId: string; tokenName: string }): void {
    const audit = this.audit;
    if (!audit) return;
    for (const space of spaces) {
      // record() never throws: an entry the database refuses goes to the error log in full.
      void audit.record({
        actor: { token: { id: by.tokenId, name: by.tokenName } },
        action: 'space.ingest',
        spaceId: space.id,
        target: space.name ?? null,
        detail: {
          tokenId: by.tokenId,
          ...(space.name === undefined ? {} : { name: space.name }),
          ...(space.description === undefined ? {} : { description: space.description }),
          ...(space.alias === undefined ? {} : { alias: space.alias }),
        },
      });
    }
  }
}
