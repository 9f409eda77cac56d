"""Control unit: instruction issue, scheduling and the scoreboard."""
