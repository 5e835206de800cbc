import { Field, ID, ObjectType } from '@nestjs/graphql';
import { ExtensionField } from '../common/graphql/extension-field.decorator';

/** A user's profile as shown on a board. */
@ObjectType('Address')
export class Address {
  @ExtensionField()
  @Field(() => ID, { description: 'Stable id: the lower-cased address' })
  id!: string;

  @Field(() => String, { description: 'The address as first received' })
  address!: string;

  @Field(() => String, { nullable: true })
  username!: string | null;

  @Field(() => String, { nullable: true })
  avatar!: string | null;
}
