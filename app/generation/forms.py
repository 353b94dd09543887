from flask_wtf import FlaskForm
from wtforms import (
    BooleanField, FloatField, IntegerField, PasswordField, SelectChoice, SelectField, StringField, SubmitField,
)
from wtforms.validators import DataRequired, InputRequired, NumberRange, Optional

from app.form_rules import Storable
from app.models import GenerationCall, GenerationRun
from app.services.generation.spec import MAX_CONCURRENCY, TRUNCATIONS


class LaunchForm(FlaskForm):
    endpoint = SelectField("Endpoint", validators=[DataRequired()])
    model = StringField("Model", validators=[DataRequired(), Storable(column=GenerationCall.model)])
    question_set = SelectField("Questions", validators=[DataRequired()])
    system_name = StringField("Store as system", validators=[Optional(), Storable(column=GenerationRun.system_name)])
    existing_system = BooleanField("Store as new answer versions of this existing system")
    length_instruction = BooleanField("Length instruction (\"around N words\", N = the reference's words)")
    context_tokens = IntegerField("Context window (tokens)", default=16000,
                                  validators=[InputRequired(), NumberRange(1, 10_000_000)])
    max_tokens = IntegerField("Max answer tokens", default=512, validators=[InputRequired(), NumberRange(1, 1_000_000)])
    temperature = FloatField("Temperature", default=0.0001, validators=[InputRequired(), NumberRange(0, 2)])
    seed = IntegerField("Seed", validators=[Optional()])
    truncation = SelectField("Truncation", choices=[SelectChoice(t) for t in TRUNCATIONS], default="leval")
    prompt_id = SelectField("Prompt version", coerce=int)
    concurrency = IntegerField("Concurrency", default=8, validators=[InputRequired(), NumberRange(1, MAX_CONCURRENCY)])
    budget_usd = FloatField("Budget (USD)", validators=[Optional(), NumberRange(min=0.000001)])
    estimate = SubmitField("Estimate (dry run)")
    launch = SubmitField("Start")


class EndpointForm(FlaskForm):
    """An admin's named endpoint: a base URL and the key that belongs to it."""

    name = StringField("Name", validators=[DataRequired(), Storable(limit=32)])
    base_url = StringField("Base URL", validators=[DataRequired(), Storable(limit=500)])
    api_key = PasswordField("API key", validators=[Optional(), Storable(limit=500)])
    clear_api_key = BooleanField("Remove the saved key")
    save = SubmitField("Save endpoint")
    remove = SubmitField("Remove endpoint")
