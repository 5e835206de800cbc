import { Field, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { ExtensionField } from '../common/graphql/extension-field.decorator';
import { QuestStatus } from '../records/quest-status.enum';

registerEnumType(QuestStatus, { name: 'QuestStatus' });

@ObjectType('Quest')
export class Quest {
  @ExtensionField()
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => QuestStatus)
  status!: QuestStatus;

  @Field(() => Int)
  participantsCount!: number;

  @ExtensionField()
  @Field(() => String, { nullable: true })
  type!: string | null;

  @ExtensionField()
  @Field(() => String, { nullable: true, description: 'ISO 8601' })
  startTime!: string | null;

  @ExtensionField()
  @Field(() => String, { nullable: true, description: 'ISO 8601' })
  endTime!: string | null;

  @ExtensionField()
  @Field(() => Int, { nullable: true })
  cap!: number | null;
}
