import { Field, ObjectType } from '@nestjs/graphql';
import { GalxeField } from '../common/graphql/extension-field.decorator';

@ObjectType('Space')
export class Space {
  /** docs/api.md (Schema) types the output id as String! while `space(id:)` takes an Int!. */
  @Field(() => String, { description: 'Unique identifier of the space' })
  id!: string;

  @Field(() => String, { description: 'Display name' })
  name!: string;

  @Field(() => String, { nullable: true })
  description!: string | null;

  /** Galxe's `alias: String!`; nullable here, as a space need not have one. */
  @GalxeField()
  @Field(() => String, {
    nullable: true,
    description: 'The alias space(alias:) finds the space by; null when it has none',
  })
  alias!: string | null;

  /** Numeric id for the field resolvers; not part of the schema. */
  spaceId!: number;
}
