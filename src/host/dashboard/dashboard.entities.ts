import { AdminSessionEntity } from './admin-session.entity';
import { AdminEntity } from './admin.entity';
import { AuditEntryEntity } from './audit/audit-entry.entity';
import { InvitationEntity } from './teams/invitation.entity';
import { SpaceMemberEntity } from './teams/space-member.entity';

/** The dashboard's own tables (our host's, not the module's). */
export const DASHBOARD_ENTITIES = [
  AdminEntity,
  AdminSessionEntity,
  SpaceMemberEntity,
  InvitationEntity,
  AuditEntryEntity,
];
