"""The pages' Flask extensions: sign-in sessions and CSRF protection, bound in register_web."""
from flask_login import LoginManager
from flask_wtf import CSRFProtect

login_manager = LoginManager()
csrf = CSRFProtect()
