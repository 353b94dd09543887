from flask_wtf import FlaskForm
from wtforms import (
    BooleanField, FloatField, IntegerField, PasswordField, SelectChoice, SelectField, StringField, SubmitField,
    TextAreaField,
)
from wtforms.validators import DataRequired, InputRequired, Length, NumberRange, Optional

from app.form_rules import Storable
from app.judge.profiles import DEFAULT as DEFAULT_PROFILE, PROFILES as JUDGE_PROFILES
from app.judge.runner import DEFAULT_CONCURRENCY
from app.services.judge_runs.pairs import DEFAULT_SCOPE, SCOPES
from app.services.judge_runs.settings import MAX_CONCURRENCY


class LaunchForm(FlaskForm):
    system = SelectField("System under test", validators=[DataRequired()])
    baseline = SelectField("Baseline", validators=[DataRequired()])
    scope = SelectField("Questions", choices=[SelectChoice(k, v) for k, v in SCOPES.items()], default=DEFAULT_SCOPE)
    judge_model = StringField("Judge model", validators=[DataRequired(), Storable(limit=120)])
    profile = SelectField("Profile", choices=[SelectChoice(k, p.label) for k, p in JUDGE_PROFILES.items()],
                          default=DEFAULT_PROFILE)
    prompt_id = SelectField("Prompt version", coerce=int)
    temperature = FloatField("Temperature", default=0.0, validators=[InputRequired(), NumberRange(0, 2)])
    concurrency = IntegerField("Concurrency", default=DEFAULT_CONCURRENCY,
                               validators=[DataRequired(), NumberRange(1, MAX_CONCURRENCY)])
    budget_usd = FloatField("Budget (USD)", validators=[Optional(), NumberRange(min=0.0001)])
    estimate = SubmitField("Estimate (dry run)")
    launch = SubmitField("Launch")


class SettingsForm(FlaskForm):
    base_url = StringField("Base URL", validators=[Optional(), Length(max=500)])
    api_key = PasswordField("API key", validators=[Optional(), Length(max=500)])
    clear_api_key = BooleanField("Remove the saved key")
    model = StringField("Default judge model", validators=[Optional(), Length(max=120)])
    baseline = SelectField("Default baseline", validate_choice=False)
    max_retries = IntegerField("Retries per call", validators=[InputRequired(), NumberRange(0, 20)])
    timeout_s = FloatField("Timeout per call (s)", validators=[InputRequired(), NumberRange(0.1, 3600)])
    prices = TextAreaField("Prices (USD per 1M tokens)", validators=[DataRequired()])
    submit = SubmitField("Save settings")


class PromptForm(FlaskForm):
    system_text = TextAreaField("System message", validators=[DataRequired(), Storable()])
    user_template = TextAreaField("User message template", validators=[DataRequired(), Storable()])
    submit = SubmitField("Save as a new version")


class RaterForm(FlaskForm):
    study_id = SelectField("Study", coerce=int)
    rater_model = StringField("Rater model", validators=[DataRequired(), Storable(limit=120)])
    prompt_id = SelectField("Prompt version", coerce=int)
    temperature = FloatField("Temperature", default=0.0, validators=[InputRequired(), NumberRange(0, 2)])
    concurrency = IntegerField("Concurrency", default=DEFAULT_CONCURRENCY,
                               validators=[DataRequired(), NumberRange(1, MAX_CONCURRENCY)])
    budget_usd = FloatField("Budget (USD)", validators=[Optional(), NumberRange(min=0.0001)])
    estimate = SubmitField("Estimate (dry run)")
    launch = SubmitField("Rate every answer")
