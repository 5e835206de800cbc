/**
 * Who may do what in the dashboard. Operators run the whole deployment; everyone else is a member
 * of one or more spaces with one role in each:
 * - owner: the space's members, tokens, privacy and audit trail, and what an editor may do;
 * - editor: the space's sprints, quests and points, and what a viewer may do;
 * - viewer: reads the space's dashboard pages.
 */
export const SPACE_ROLES = ['owner', 'editor', 'viewer'] as const;
export type SpaceRole = (typeof SPACE_ROLES)[number];

export type Permission = 'space.read' | 'space.edit' | 'space.manage' | 'deployment.manage';

const GRANTS: Record<SpaceRole, ReadonlySet<Permission>> = {
  viewer: new Set(['space.read']),
  editor: new Set(['space.read', 'space.edit']),
  owner: new Set(['space.read', 'space.edit', 'space.manage']),
};

export function isSpaceRole(value: unknown): value is SpaceRole {
  return typeof value === 'string' && (SPACE_ROLES as readonly string[]).includes(value);
}

/** What one signed-in account may reach: read fresh from the database on every request. */
export class Access {
  constructor(
    readonly operator: boolean,
    /** The account's role in each space it belongs to. */
    readonly roles: ReadonlyMap<number, SpaceRole>,
  ) {}

  /** `deployment.manage` needs an operator; a space permission, an operator or a role granting it. */
  can(permission: Permission, spaceId?: number): boolean {
    if (this.operator) return true;
    if (permission === 'deployment.manage' || spaceId === undefined) return false;
    const role = this.roles.get(spaceId);
    return role !== undefined && GRANTS[role].has(permission);
  }

  /** Whether the account sees the space at all (any role, or an operator). */
  sees(spaceId: number): boolean {
    return this.operator || this.roles.has(spaceId);
  }

  /** The spaces in which the account holds `permission`; undefined for an operator (every space). */
  spacesWith(permission: Permission): number[] | undefined {
    if (this.operator) return undefined;
    return [...this.roles.keys()].filter((id) => this.can(permission, id)).sort((a, b) => a - b);
  }
}
