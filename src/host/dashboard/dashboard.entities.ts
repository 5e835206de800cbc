import { AdminSessionEntity } from './accounts/admin-session.entity';
import { AdminEntity } from './accounts/admin.entity';
import { AuditEntryEntity } from './audit/audit-entry.entity';
import { InvitationEntity } from './accounts/invitation.entity';
import { SpaceMemberEntity } from './accounts/space-member.entity';
import { PointsUploadLineEntity } from './points-upload-line.entity';
import { PointsUploadEntity } from './points-upload.entity';

/** The dashboard's own tables (our host's, not the module's). */
export const DASHBOARD_ENTITIES = [
  AdminEntity,
  AdminSessionEntity,
  SpaceMemberEntity,
  InvitationEntity,
  AuditEntryEntity,
  PointsUploadEntity,
  PointsUploadLineEntity,
];
