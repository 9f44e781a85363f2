terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.80"
    }
  }
  backend "s3" {
    bucket = "acme-terraform-state"
    key    = "prod/api.tfstate"
    region = "eu-west-1"
  }
}

variable "db_password" {
  type      = string
  sensitive = true
}

resource "aws_db_instance" "main" {
  identifier             = "acme-prod"
  engine                 = "postgres"
  engine_version         = "16.4"
  instance_class         = "db.t4g.medium"
  username               = "app"
  password               = var.db_password
  skip_final_snapshot    = false
  vpc_security_group_ids = [aws_security_group.db.id]
}

resource "aws_secretsmanager_secret" "api_token" {
  name       = "prod/api/token"
  kms_key_id = aws_kms_key.secrets.arn
}

data "aws_secretsmanager_secret_version" "api_token" {
  secret_id = aws_secretsmanager_secret.api_token.id
}

output "db_endpoint" {
  value = aws_db_instance.main.endpoint
}
