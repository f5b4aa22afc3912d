"""Reply shapes several strategies share: proposed thoughts, a score with its reason, and a final answer."""

from pydantic import BaseModel, Field, field_validator


class ScoreOut(BaseModel):
    score: float
    reason: str = Field(default="", max_length=4000)

    @field_validator("score")
    @classmethod
    def clamp(cls, value):
        # Models drift outside the scale; a clamped score keeps ranking, thresholds and UCB1 meaningful.
        return min(1.0, max(0.0, value))


class AnswerOut(BaseModel):
    answer: str = Field(min_length=1, max_length=20000)


class ThoughtOut(BaseModel):
    thought: str = Field(min_length=1, max_length=4000)
    state: dict = Field(default_factory=dict)


class ThoughtsOut(BaseModel):
    thoughts: list[ThoughtOut] = Field(min_length=1, max_length=20)
